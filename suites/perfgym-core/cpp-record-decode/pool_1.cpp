// Record decoding: base64 digits looked up with string::find, 24-bit groups split into bytes.
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

const std::string ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

uint64_t field(const std::vector<uint8_t>& bytes, size_t at, int width) {
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; i--) {
        v = v * 256 + bytes[at + i];
    }
    return v;
}

}  // namespace

int main() {
    long long n;
    if (!(std::cin >> n)) {
        return 0;
    }
    std::string text, line;
    while (std::cin >> line) {
        text += line;
    }
    std::vector<uint8_t> bytes;
    uint32_t acc = 0;
    int have = 0;
    for (char c : text) {
        if (c == '=') {
            break;
        }
        acc = acc << 6 | (uint32_t)ALPHABET.find(c);
        if (++have == 4) {
            bytes.push_back((uint8_t)(acc >> 16));
            bytes.push_back((uint8_t)(acc >> 8));
            bytes.push_back((uint8_t)acc);
            acc = 0;
            have = 0;
        }
    }
    // A final group of 2 or 3 digits carries 1 or 2 bytes.
    if (have >= 2) {
        acc <<= 6 * (4 - have);
        bytes.push_back((uint8_t)(acc >> 16));
        if (have == 3) {
            bytes.push_back((uint8_t)(acc >> 8));
        }
    }
    long long qty_sum = 0, returned = 0;
    uint64_t revenue = 0, max_id = 0;
    std::map<uint64_t, long long> per_region;
    for (long long r = 0; r < n; r++) {
        size_t at = (size_t)r * 16;
        uint64_t id = field(bytes, at, 4);
        int32_t qty = (int32_t)(uint32_t)field(bytes, at + 4, 4);
        uint64_t price = field(bytes, at + 8, 4);
        uint64_t region = field(bytes, at + 12, 2);
        uint64_t flags = field(bytes, at + 14, 2);
        qty_sum += qty;
        revenue += (uint64_t)((int64_t)qty * (int64_t)price);
        returned += flags & 1;
        if (id > max_id) {
            max_id = id;
        }
        per_region[region]++;
    }
    uint64_t busiest = 0;
    long long busiest_count = 0;
    for (const auto& [region, count] : per_region) {
        if (count > busiest_count) {
            busiest = region;
            busiest_count = count;
        }
    }
    std::cout << n << " " << qty_sum << " " << revenue << " " << returned << " " << max_id << "\n";
    std::cout << busiest << " " << busiest_count << "\n";
    return 0;
}
