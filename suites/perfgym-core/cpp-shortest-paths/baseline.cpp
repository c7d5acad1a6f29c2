// Shortest paths: array Dijkstra, scanning every node for the closest unvisited one.
#include <iostream>
#include <utility>
#include <vector>

int main() {
    int n, m;
    if (!(std::cin >> n >> m)) {
        return 0;
    }
    std::vector<std::vector<std::pair<int, long long>>> adj(n + 1);
    for (int i = 0; i < m; i++) {
        int u, v;
        long long w;
        std::cin >> u >> v >> w;
        adj[u].push_back({v, w});
    }
    const long long INF = -1;
    std::vector<long long> dist(n + 1, INF);
    std::vector<bool> done(n + 1, false);
    dist[1] = 0;
    for (int round = 0; round < n; round++) {
        int best = -1;
        for (int v = 1; v <= n; v++) {
            if (!done[v] && dist[v] != INF && (best == -1 || dist[v] < dist[best])) {
                best = v;
            }
        }
        if (best == -1) {
            break;
        }
        done[best] = true;
        for (auto [to, w] : adj[best]) {
            if (dist[to] == INF || dist[best] + w < dist[to]) {
                dist[to] = dist[best] + w;
            }
        }
    }
    long long reached = 0, sum = 0, far = 0;
    for (int v = 1; v <= n; v++) {
        if (dist[v] != INF) {
            reached++;
            sum += dist[v];
            if (dist[v] > far) {
                far = dist[v];
            }
        }
    }
    std::cout << reached << " " << sum << " " << far << "\n";
    return 0;
}
