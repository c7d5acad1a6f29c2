// Word frequencies: an ordered std::map keyed by std::string, reading with synced iostreams.
#include <iostream>
#include <map>
#include <string>

int main() {
    std::map<std::string, long long> freq;
    std::string w;
    long long total = 0;
    while (std::cin >> w) {
        freq[w]++;
        total++;
    }
    std::string top;
    long long top_count = 0, singles = 0;
    for (const auto& [word, count] : freq) {
        if (count > top_count) {  // map order: the first word with the top count is smallest
            top = word;
            top_count = count;
        }
        if (count == 1) {
            singles++;
        }
    }
    std::cout << total << " " << freq.size() << " " << singles << "\n";
    if (total > 0) {
        std::cout << top << " " << top_count << "\n";
    }
    return 0;
}
