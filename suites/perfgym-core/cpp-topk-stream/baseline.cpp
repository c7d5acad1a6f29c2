// Top-K of a stream: keeps every value, sorts a copy of all of them at each query.
#include <algorithm>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

int main() {
    long long n, k;
    if (!(std::cin >> n >> k)) {
        return 0;
    }
    std::vector<long long> values;
    long long queries = 0, total = 0, last = 0;
    for (long long i = 0; i < n; i++) {
        std::string tok;
        std::cin >> tok;
        if (tok == "?") {
            std::vector<long long> sorted = values;
            std::sort(sorted.begin(), sorted.end(), std::greater<long long>());
            long long sum = 0;
            for (long long j = 0; j < k && j < (long long)sorted.size(); j++) {
                sum += sorted[j];
            }
            queries++;
            total += sum;
            last = sum;
        } else {
            values.push_back(std::stoll(tok));
        }
    }
    std::cout << queries << " " << total << " " << last << "\n";
    return 0;
}
