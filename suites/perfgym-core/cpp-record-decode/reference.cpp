// Record decoding: table-driven base64 straight into a byte buffer, fields read with memcpy.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main() {
    std::vector<char> in;
    char chunk[1 << 16];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        in.insert(in.end(), chunk, chunk + got);
    }
    in.push_back('\0');
    char* p;
    long long n = std::strtoll(in.data(), &p, 10);
    if (p == in.data()) {
        return 0;
    }
    // 0..63 for base64 digits, 64 for '=', 255 for anything else (whitespace is skipped).
    uint8_t table[256];
    std::memset(table, 255, sizeof table);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; i++) {
        table[(unsigned char)alphabet[i]] = (uint8_t)i;
    }
    table[(unsigned char)'='] = 64;
    std::vector<uint8_t> bytes((size_t)n * 16 + 3);
    uint8_t* out = bytes.data();
    uint32_t acc = 0;
    int have = 0;
    for (const char* end = in.data() + in.size() - 1; p < end; p++) {
        uint8_t v = table[(unsigned char)*p];
        if (v >= 64) {
            if (v == 64) {
                break;
            }
            continue;
        }
        acc = acc << 6 | v;
        if (++have == 4) {
            out[0] = (uint8_t)(acc >> 16);
            out[1] = (uint8_t)(acc >> 8);
            out[2] = (uint8_t)acc;
            out += 3;
            acc = 0;
            have = 0;
        }
    }
    // A final group of 2 or 3 digits carries 1 or 2 bytes.
    if (have >= 2) {
        acc <<= 6 * (4 - have);
        *out++ = (uint8_t)(acc >> 16);
        if (have == 3) {
            *out++ = (uint8_t)(acc >> 8);
        }
    }
    long long qty_sum = 0, returned = 0;
    uint64_t revenue = 0;
    uint32_t max_id = 0;
    std::vector<long long> per_region(65536, 0);
    for (long long r = 0; r < n; r++) {
        const uint8_t* rec = bytes.data() + r * 16;
        uint32_t id, price;
        int32_t qty;
        uint16_t region, flags;
        // The format is little-endian, as is x86-64, so memcpy reads the fields as stored.
        std::memcpy(&id, rec, 4);
        std::memcpy(&qty, rec + 4, 4);
        std::memcpy(&price, rec + 8, 4);
        std::memcpy(&region, rec + 12, 2);
        std::memcpy(&flags, rec + 14, 2);
        qty_sum += qty;
        revenue += (uint64_t)((int64_t)qty * (int64_t)price);
        returned += flags & 1;
        max_id = id > max_id ? id : max_id;
        per_region[region]++;
    }
    int busiest = 0;
    for (int g = 1; g < 65536; g++) {
        if (per_region[g] > per_region[busiest]) {
            busiest = g;
        }
    }
    std::printf("%lld %lld %llu %lld %u\n", n, qty_sum, (unsigned long long)revenue, returned, max_id);
    std::printf("%d %lld\n", n > 0 ? busiest : 0, per_region[busiest]);
    return 0;
}
