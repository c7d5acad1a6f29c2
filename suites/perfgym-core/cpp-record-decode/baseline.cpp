// Record decoding: base64 via a string of '0'/'1' bits, then fields assembled byte by byte.
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

const std::string ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string six_bits(int v) {
    std::string s;
    for (int b = 5; b >= 0; b--) {
        s += ((v >> b) & 1) ? '1' : '0';
    }
    return s;
}

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
    std::string bits;
    for (char c : text) {
        if (c == '=') {
            break;
        }
        bits += six_bits((int)ALPHABET.find(c));
    }
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i + 8 <= bits.size(); i += 8) {
        bytes.push_back((uint8_t)std::stoi(bits.substr(i, 8), nullptr, 2));
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
