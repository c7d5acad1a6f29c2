// Orders join: hash join over raw input bytes; customer ids live in an open-addressing table
// of byte offsets, so no String is made per row.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

public class Main {
    static byte[] buf;
    static int pos;

    static boolean space(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    /** Advances to the next token and returns its end; the token starts at {@code pos}. */
    static int token() {
        while (pos < buf.length && space(buf[pos])) {
            pos++;
        }
        int end = pos;
        while (end < buf.length && !space(buf[end])) {
            end++;
        }
        return end;
    }

    static long number() {
        int end = token();
        long v = 0;
        for (; pos < end; pos++) {
            v = v * 10 + (buf[pos] - '0');
        }
        return v;
    }

    static int hash(int from, int to) {
        int h = 0x811c9dc5;
        for (int i = from; i < to; i++) {
            h = (h ^ buf[i]) * 0x01000193;
        }
        return h ^ (h >>> 15);
    }

    static boolean same(int a, int aLen, int b, int bLen) {
        if (aLen != bLen) {
            return false;
        }
        for (int i = 0; i < aLen; i++) {
            if (buf[a + i] != buf[b + i]) {
                return false;
            }
        }
        return true;
    }

    public static void main(String[] args) throws IOException {
        buf = System.in.readAllBytes();
        if (token() == pos) {
            return;
        }
        int c = (int) number(), o = (int) number();
        int cap = Integer.highestOneBit(Math.max(4, c * 2)) << 1, mask = cap - 1;
        int[] keyAt = new int[cap], keyLen = new int[cap], country = new int[cap];
        java.util.Arrays.fill(keyLen, -1);
        // Countries are few: intern them by bytes into a small list of ids.
        int[] countryAt = new int[16], countryLen = new int[16];
        int countries = 0;
        for (int i = 0; i < c; i++) {
            int end = token();
            int at = pos, len = end - pos;
            pos = end;
            int cend = token();
            int cat = pos, clen = cend - pos;
            pos = cend;
            int id = -1;
            for (int k = 0; k < countries; k++) {
                if (same(countryAt[k], countryLen[k], cat, clen)) {
                    id = k;
                    break;
                }
            }
            if (id < 0) {
                if (countries == countryAt.length) {
                    countryAt = java.util.Arrays.copyOf(countryAt, countries * 2);
                    countryLen = java.util.Arrays.copyOf(countryLen, countries * 2);
                }
                countryAt[countries] = cat;
                countryLen[countries] = clen;
                id = countries++;
            }
            int h = hash(at, at + len) & mask;
            while (keyLen[h] >= 0) {
                h = (h + 1) & mask;
            }
            keyAt[h] = at;
            keyLen[h] = len;
            country[h] = id;
        }
        long[] orders = new long[countries], amounts = new long[countries];
        long unmatched = 0, unmatchedAmount = 0;
        for (int i = 0; i < o; i++) {
            pos = token(); // order id: not needed
            int end = token();
            int at = pos, len = end - pos;
            pos = end;
            long amount = number();
            int h = hash(at, end) & mask;
            int found = -1;
            while (keyLen[h] >= 0) {
                if (same(keyAt[h], keyLen[h], at, len)) {
                    found = country[h];
                    break;
                }
                h = (h + 1) & mask;
            }
            if (found < 0) {
                unmatched++;
                unmatchedAmount += amount;
            } else {
                orders[found]++;
                amounts[found] += amount;
            }
        }
        TreeMap<String, Integer> names = new TreeMap<>();
        for (int k = 0; k < countries; k++) {
            if (orders[k] > 0) {
                names.put(new String(buf, countryAt[k], countryLen[k], StandardCharsets.US_ASCII), k);
            }
        }
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, Integer> e : names.entrySet()) {
            int k = e.getValue();
            out.append(e.getKey()).append(' ').append(orders[k]).append(' ').append(amounts[k]).append('\n');
        }
        out.append("unmatched ").append(unmatched).append(' ').append(unmatchedAmount).append('\n');
        System.out.print(out);
    }
}
