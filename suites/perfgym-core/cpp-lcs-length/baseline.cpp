// LCS length: the textbook DP, row by row, copying the finished row into the previous one.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

int main() {
    std::string a, b;
    if (!(std::cin >> a >> b)) {
        return 0;
    }
    std::vector<int> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
    for (size_t i = 1; i <= a.size(); i++) {
        for (size_t j = 1; j <= b.size(); j++) {
            if (a[i - 1] == b[j - 1]) {
                cur[j] = prev[j - 1] + 1;
            } else {
                cur[j] = std::max(prev[j], cur[j - 1]);
            }
        }
        prev = cur;
    }
    std::cout << prev[b.size()] << "\n";
    return 0;
}
