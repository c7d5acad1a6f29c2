// Top-K of a stream: keeps the K largest values in a sorted vector, inserting with a binary search.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

int main() {
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
    long long n, k;
    if (!(std::cin >> n >> k)) {
        return 0;
    }
    std::vector<long long> best;  // ascending; best.front() is the smallest kept value
    long long sum = 0, queries = 0, total = 0, last = 0;
    std::string tok;
    for (long long i = 0; i < n; i++) {
        std::cin >> tok;
        if (tok == "?") {
            queries++;
            total += sum;
            last = sum;
            continue;
        }
        long long v = std::stoll(tok);
        if ((long long)best.size() < k) {
            best.insert(std::upper_bound(best.begin(), best.end(), v), v);
            sum += v;
        } else if (k > 0 && v > best.front()) {
            sum += v - best.front();
            best.erase(best.begin());
            best.insert(std::upper_bound(best.begin(), best.end(), v), v);
        }
    }
    std::cout << queries << " " << total << " " << last << "\n";
    return 0;
}
