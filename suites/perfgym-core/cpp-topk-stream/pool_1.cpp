// Top-K of a stream: keeps every value, selects the K largest with nth_element at each query.
#include <algorithm>
#include <functional>
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
    std::vector<long long> values;
    long long queries = 0, total = 0, last = 0;
    std::string tok;
    for (long long i = 0; i < n; i++) {
        std::cin >> tok;
        if (tok == "?") {
            long long sum = 0;
            if ((long long)values.size() <= k) {
                for (long long v : values) {
                    sum += v;
                }
            } else {
                // nth_element reorders in place; the multiset of values is unchanged.
                std::nth_element(values.begin(), values.begin() + (k - 1), values.end(),
                                 std::greater<long long>());
                for (long long j = 0; j < k; j++) {
                    sum += values[j];
                }
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
