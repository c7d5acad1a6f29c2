// Word frequencies: open addressing over views into one input buffer; no per-word allocation.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

namespace {

struct Slot {
    uint64_t hash;
    const char* word;  // nullptr: empty slot
    uint32_t len;
    long long count;
};

inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline uint64_t hash_bytes(const char* p, size_t n) {
    // FNV-1a, then a final multiply so the low bits used for the index are well mixed.
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    }
    return h * 0x9e3779b97f4a7c15ull;
}

}  // namespace

int main() {
    std::vector<char> buf;
    char chunk[1 << 16];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        buf.insert(buf.end(), chunk, chunk + got);
    }
    size_t cap = 1 << 12, used = 0;
    std::vector<Slot> table(cap, Slot{0, nullptr, 0, 0});
    long long total = 0;
    const char* p = buf.data();
    const char* end = p + buf.size();
    while (p < end) {
        while (p < end && is_space(*p)) {
            p++;
        }
        const char* s = p;
        while (p < end && !is_space(*p)) {
            p++;
        }
        if (p == s) {
            break;
        }
        uint32_t len = (uint32_t)(p - s);
        uint64_t h = hash_bytes(s, len);
        size_t i = (h >> 20) & (cap - 1);
        while (table[i].word &&
               !(table[i].hash == h && table[i].len == len && std::memcmp(table[i].word, s, len) == 0)) {
            i = (i + 1) & (cap - 1);
        }
        total++;
        if (table[i].word) {
            table[i].count++;
            continue;
        }
        table[i] = Slot{h, s, len, 1};
        // Grow at 50% load so linear-probe runs stay short.
        if (++used * 2 > cap) {
            std::vector<Slot> old;
            old.swap(table);
            cap *= 2;
            table.assign(cap, Slot{0, nullptr, 0, 0});
            for (const Slot& e : old) {
                if (e.word) {
                    size_t j = (e.hash >> 20) & (cap - 1);
                    while (table[j].word) {
                        j = (j + 1) & (cap - 1);
                    }
                    table[j] = e;
                }
            }
        }
    }
    std::string_view top;
    long long top_count = 0, singles = 0;
    for (const Slot& e : table) {
        if (!e.word) {
            continue;
        }
        std::string_view w(e.word, e.len);
        if (e.count > top_count || (e.count == top_count && w < top)) {
            top = w;
            top_count = e.count;
        }
        singles += e.count == 1;
    }
    std::printf("%lld %zu %lld\n", total, used, singles);
    if (total > 0) {
        std::printf("%.*s %lld\n", (int)top.size(), top.data(), top_count);
    }
    return 0;
}
