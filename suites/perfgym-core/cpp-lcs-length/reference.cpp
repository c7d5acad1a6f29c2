// LCS length: bit-parallel DP (Allison-Dix / Hyyro), 64 columns of the table per machine word.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

std::string token(const std::vector<char>& buf, size_t& pos) {
    while (pos < buf.size() && (buf[pos] == ' ' || buf[pos] == '\n' || buf[pos] == '\r' ||
                                buf[pos] == '\t')) {
        pos++;
    }
    size_t start = pos;
    while (pos < buf.size() && !(buf[pos] == ' ' || buf[pos] == '\n' || buf[pos] == '\r' ||
                                 buf[pos] == '\t')) {
        pos++;
    }
    return std::string(buf.begin() + start, buf.begin() + pos);
}

}  // namespace

int main() {
    std::vector<char> buf;
    char chunk[1 << 16];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        buf.insert(buf.end(), chunk, chunk + got);
    }
    size_t pos = 0;
    std::string a = token(buf, pos), b = token(buf, pos);
    if (a.empty() || b.empty()) {
        std::printf("0\n");
        return 0;
    }
    // Column j of the DP is bit j of a word array; match[c] marks the columns where b[j] == c.
    const size_t words = (b.size() + 63) / 64;
    std::vector<uint64_t> match(256 * words, 0);
    for (size_t j = 0; j < b.size(); j++) {
        match[(unsigned char)b[j] * words + j / 64] |= uint64_t{1} << (j % 64);
    }
    // V has a 0 bit in each column where the LCS row value steps up; it starts all ones.
    std::vector<uint64_t> v(words, ~uint64_t{0});
    for (char c : a) {
        const uint64_t* m = &match[(unsigned char)c * words];
        uint64_t carry = 0;
        for (size_t w = 0; w < words; w++) {
            uint64_t x = v[w], u = x & m[w];
            // V' = (V + U) | (V & ~M), the addition carried across the whole word array.
            uint64_t t = x + carry;
            uint64_t c1 = t < carry;
            uint64_t s = t + u;
            uint64_t c2 = s < u;
            carry = c1 | c2;
            v[w] = s | (x & ~m[w]);
        }
    }
    size_t lcs = 0;
    for (size_t j = 0; j < b.size(); j++) {
        lcs += !((v[j / 64] >> (j % 64)) & 1);
    }
    std::printf("%zu\n", lcs);
    return 0;
}
