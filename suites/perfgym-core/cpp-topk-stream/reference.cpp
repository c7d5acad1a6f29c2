// Top-K of a stream: a size-K min-heap and a running sum answer each query in O(1).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <queue>
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

}  // namespace

int main() {
    std::vector<char> buf = slurp();
    const char* p = buf.data();
    char* end;
    long long n = std::strtoll(p, &end, 10);
    if (end == p) {
        return 0;
    }
    long long k = std::strtoll(end, &end, 10);
    p = end;
    std::priority_queue<long long, std::vector<long long>, std::greater<long long>> heap;
    long long sum = 0, queries = 0, total = 0, last = 0;
    for (long long i = 0; i < n; i++) {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') {
            p++;
        }
        if (*p == '?') {
            p++;
            queries++;
            total += sum;
            last = sum;
            continue;
        }
        long long v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
        }
        // Only values that beat the smallest kept one can change the answer.
        if ((long long)heap.size() < k) {
            heap.push(v);
            sum += v;
        } else if (k > 0 && v > heap.top()) {
            sum += v - heap.top();
            heap.pop();
            heap.push(v);
        }
    }
    std::printf("%lld %lld %lld\n", queries, total, last);
    return 0;
}
