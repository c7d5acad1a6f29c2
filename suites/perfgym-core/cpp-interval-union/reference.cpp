// Interval union: sort by start and sweep once; depth by merging the sorted starts and ends.
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace {

std::vector<char> slurp() {
    std::vector<char> buf;
    char chunk[1 << 16];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        buf.insert(buf.end(), chunk, chunk + got);
    }
    buf.push_back('\0');
    return buf;
}

struct Reader {
    const char* p;
    bool next(long long& out) {
        while (*p && (*p < '0' || *p > '9')) {
            p++;
        }
        if (!*p) {
            return false;
        }
        long long v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
        }
        out = v;
        return true;
    }
};

}  // namespace

int main() {
    std::vector<char> buf = slurp();
    Reader in{buf.data()};
    long long n;
    if (!in.next(n)) {
        return 0;
    }
    std::vector<std::pair<long long, long long>> iv(n);
    std::vector<long long> starts(n), ends(n);
    for (long long i = 0; i < n; i++) {
        in.next(iv[i].first);
        in.next(iv[i].second);
        starts[i] = iv[i].first;
        ends[i] = iv[i].second;
    }
    std::sort(iv.begin(), iv.end());
    long long covered = 0, blocks = 0;
    for (long long i = 0; i < n;) {
        long long l = iv[i].first, r = iv[i].second;
        for (i++; i < n && iv[i].first <= r; i++) {
            r = std::max(r, iv[i].second);
        }
        covered += r - l;
        blocks++;
    }
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    // Before the j-th start, every end <= it has closed its interval (half-open intervals).
    long long depth = 0;
    size_t e = 0;
    for (long long j = 0; j < n; j++) {
        while (e < ends.size() && ends[e] <= starts[j]) {
            e++;
        }
        depth = std::max(depth, j + 1 - (long long)e);
    }
    std::printf("%lld %lld %lld\n", covered, blocks, depth);
    return 0;
}
