// Interval union: keeps a sorted list of merged blocks, merging each new interval by a linear scan;
// depth by counting, for each start point, the intervals that contain it.
#include <iostream>
#include <utility>
#include <vector>

int main() {
    int n;
    if (!(std::cin >> n)) {
        return 0;
    }
    std::vector<std::pair<long long, long long>> intervals(n);
    for (auto& [l, r] : intervals) {
        std::cin >> l >> r;
    }
    std::vector<std::pair<long long, long long>> blocks;  // disjoint, sorted, non-touching
    for (auto [l, r] : intervals) {
        size_t i = 0;
        while (i < blocks.size() && blocks[i].second < l) {
            i++;
        }
        // Swallow every block that overlaps or touches [l, r).
        while (i < blocks.size() && blocks[i].first <= r) {
            l = std::min(l, blocks[i].first);
            r = std::max(r, blocks[i].second);
            blocks.erase(blocks.begin() + i);
        }
        blocks.insert(blocks.begin() + i, {l, r});
    }
    long long covered = 0;
    for (auto [l, r] : blocks) {
        covered += r - l;
    }
    // The deepest point of a set of half-open intervals is always some interval's start.
    long long depth = 0;
    for (auto [p, unused] : intervals) {
        long long d = 0;
        for (auto [l, r] : intervals) {
            if (l <= p && p < r) {
                d++;
            }
        }
        depth = std::max(depth, d);
    }
    std::cout << covered << " " << blocks.size() << " " << depth << "\n";
    return 0;
}
