// Interval union: an ordered map of merged blocks, and a sorted event list for the depth.
#include <algorithm>
#include <iostream>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

int main() {
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
    int n;
    if (!(std::cin >> n)) {
        return 0;
    }
    std::map<long long, long long> blocks;  // start -> end, disjoint and non-touching
    std::vector<std::pair<long long, int>> events;
    events.reserve(2 * (size_t)n);
    for (int i = 0; i < n; i++) {
        long long l, r;
        std::cin >> l >> r;
        events.push_back({l, +1});
        events.push_back({r, -1});
        auto it = blocks.upper_bound(l);
        if (it != blocks.begin() && std::prev(it)->second >= l) {
            --it;
        }
        while (it != blocks.end() && it->first <= r) {
            l = std::min(l, it->first);
            r = std::max(r, it->second);
            it = blocks.erase(it);
        }
        blocks.emplace(l, r);
    }
    long long covered = 0;
    for (auto [l, r] : blocks) {
        covered += r - l;
    }
    // Ends sort before starts at the same point: half-open intervals that touch do not overlap.
    std::sort(events.begin(), events.end());
    long long depth = 0, cur = 0;
    for (auto [x, delta] : events) {
        cur += delta;
        depth = std::max(depth, cur);
    }
    std::cout << covered << " " << blocks.size() << " " << depth << "\n";
    return 0;
}
