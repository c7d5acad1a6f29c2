// Shortest paths: Dijkstra on a compressed (CSR) adjacency array with a lazy binary heap.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <queue>
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
    long long n, m;
    if (!in.next(n) || !in.next(m)) {
        return 0;
    }
    std::vector<int> from(m), to(m);
    std::vector<long long> weight(m);
    // Edges are stored contiguously per source node so relaxing a node touches one cache run.
    std::vector<int> start(n + 2, 0);
    for (long long i = 0; i < m; i++) {
        long long u, v, w;
        in.next(u);
        in.next(v);
        in.next(w);
        from[i] = (int)u;
        to[i] = (int)v;
        weight[i] = w;
        start[u + 1]++;
    }
    for (long long v = 1; v <= n + 1; v++) {
        start[v] += start[v - 1];
    }
    std::vector<int> fill(start.begin(), start.end() - 1);
    std::vector<std::pair<int, long long>> edges(m);
    for (long long i = 0; i < m; i++) {
        edges[fill[from[i]]++] = {to[i], weight[i]};
    }
    const long long INF = INT64_MAX;
    std::vector<long long> dist(n + 1, INF);
    using Item = std::pair<long long, int>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    dist[1] = 0;
    heap.push({0, 1});
    while (!heap.empty()) {
        auto [d, u] = heap.top();
        heap.pop();
        if (d != dist[u]) {
            continue;  // stale entry: u was settled through a shorter path
        }
        for (int e = start[u]; e < start[u + 1]; e++) {
            long long nd = d + edges[e].second;
            if (nd < dist[edges[e].first]) {
                dist[edges[e].first] = nd;
                heap.push({nd, edges[e].first});
            }
        }
    }
    long long reached = 0, sum = 0, far = 0;
    for (long long v = 1; v <= n; v++) {
        if (dist[v] != INF) {
            reached++;
            sum += dist[v];
            if (dist[v] > far) {
                far = dist[v];
            }
        }
    }
    std::printf("%lld %lld %lld\n", reached, sum, far);
    return 0;
}
