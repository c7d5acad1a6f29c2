// CSV group-by: one readAllBytes, a byte-level parser, and region names interned by their bytes.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public class Main {
    static byte[] buf;
    static int pos;

    // Regions seen so far; a region's bytes are compared against these few names directly,
    // so no String is created per row.
    static int regionCount;
    static byte[][] names = new byte[16][];
    static long[] rows = new long[16], units = new long[16], cents = new long[16];

    static int region(int from, int to) {
        outer:
        for (int r = 0; r < regionCount; r++) {
            byte[] n = names[r];
            if (n.length != to - from) {
                continue;
            }
            for (int i = 0; i < n.length; i++) {
                if (n[i] != buf[from + i]) {
                    continue outer;
                }
            }
            return r;
        }
        if (regionCount == names.length) {
            int cap = regionCount * 2;
            names = Arrays.copyOf(names, cap);
            rows = Arrays.copyOf(rows, cap);
            units = Arrays.copyOf(units, cap);
            cents = Arrays.copyOf(cents, cap);
        }
        names[regionCount] = Arrays.copyOfRange(buf, from, to);
        return regionCount++;
    }

    // Plain StringBuilder calls: the `+` operator and lambdas bootstrap invokedynamic call
    // sites, which costs more JVM start-up time than this whole program's parsing.
    static void money(StringBuilder out, long c) {
        out.append(c / 100).append('.').append(c % 100 < 10 ? "0" : "").append(c % 100);
    }

    public static void main(String[] args) throws IOException {
        buf = System.in.readAllBytes();
        int n = buf.length;
        while (pos < n && buf[pos] != '\n') {
            pos++; // header
        }
        pos++;
        while (pos < n) {
            if (buf[pos] == '\n' || buf[pos] == '\r' || buf[pos] == ' ') {
                pos++;
                continue;
            }
            int start = pos;
            while (buf[pos] != ',') {
                pos++;
            }
            int r = region(start, pos);
            pos++;
            while (buf[pos] != ',') {
                pos++; // product: not needed
            }
            pos++;
            long u = 0;
            while (buf[pos] != ',') {
                u = u * 10 + (buf[pos++] - '0');
            }
            pos++;
            long whole = 0, frac = 0;
            int digits = 0;
            while (pos < n && buf[pos] >= '0' && buf[pos] <= '9') {
                whole = whole * 10 + (buf[pos++] - '0');
            }
            if (pos < n && buf[pos] == '.') {
                pos++;
                while (pos < n && buf[pos] >= '0' && buf[pos] <= '9') {
                    frac = frac * 10 + (buf[pos++] - '0');
                    digits++;
                }
            }
            for (; digits < 2; digits++) {
                frac *= 10;
            }
            rows[r]++;
            units[r] += u;
            cents[r] += u * (whole * 100 + frac);
        }
        int[] order = new int[regionCount];
        String[] label = new String[regionCount];
        for (int r = 0; r < regionCount; r++) {
            label[r] = new String(names[r], StandardCharsets.US_ASCII);
            // Insertion sort: there are only a handful of regions.
            int j = r;
            for (; j > 0 && label[order[j - 1]].compareTo(label[r]) > 0; j--) {
                order[j] = order[j - 1];
            }
            order[j] = r;
        }
        long allRows = 0, allUnits = 0, allCents = 0;
        StringBuilder out = new StringBuilder();
        for (int r : order) {
            out.append(label[r]).append(' ').append(rows[r]).append(' ').append(units[r]).append(' ');
            money(out, cents[r]);
            out.append('\n');
            allRows += rows[r];
            allUnits += units[r];
            allCents += cents[r];
        }
        out.append("total ").append(allRows).append(' ').append(allUnits).append(' ');
        money(out, allCents);
        out.append('\n');
        System.out.print(out);
    }
}
