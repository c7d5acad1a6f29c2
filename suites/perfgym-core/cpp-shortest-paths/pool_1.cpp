// Shortest paths: Dijkstra with a std::set as the priority queue (erase + insert to decrease a key).
#include <iostream>
#include <set>
#include <utility>
#include <vector>

int main() {
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
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
    std::set<std::pair<long long, int>> frontier;
    dist[1] = 0;
    frontier.insert({0, 1});
    while (!frontier.empty()) {
        auto [d, u] = *frontier.begin();
        frontier.erase(frontier.begin());
        for (auto [to, w] : adj[u]) {
            if (dist[to] == INF || d + w < dist[to]) {
                if (dist[to] != INF) {
                    frontier.erase({dist[to], to});
                }
                dist[to] = d + w;
                frontier.insert({dist[to], to});
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
