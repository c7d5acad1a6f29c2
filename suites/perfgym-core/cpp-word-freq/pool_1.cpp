// Word frequencies: std::unordered_map keyed by std::string, unsynced iostreams.
#include <iostream>
#include <string>
#include <unordered_map>

int main() {
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
    std::unordered_map<std::string, long long> freq;
    freq.reserve(1 << 16);
    std::string w;
    long long total = 0;
    while (std::cin >> w) {
        freq[w]++;
        total++;
    }
    const std::string* top = nullptr;
    long long top_count = 0, singles = 0;
    for (const auto& [word, count] : freq) {
        if (count > top_count || (count == top_count && word < *top)) {
            top = &word;
            top_count = count;
        }
        if (count == 1) {
            singles++;
        }
    }
    std::cout << total << " " << freq.size() << " " << singles << "\n";
    if (total > 0) {
        std::cout << *top << " " << top_count << "\n";
    }
    return 0;
}
