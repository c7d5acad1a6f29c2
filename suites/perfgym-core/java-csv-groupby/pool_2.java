// CSV group-by: one readAllBytes and a byte-level field parser, money as long cents, but a new
// String per row for the region key of a HashMap.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;

public class Main {
    static final class Stats {
        long rows;
        long units;
        long cents;
    }

    static String money(long cents) {
        return (cents / 100) + "." + (cents % 100 < 10 ? "0" : "") + (cents % 100);
    }

    public static void main(String[] args) throws IOException {
        byte[] buf = System.in.readAllBytes();
        int n = buf.length, pos = 0;
        while (pos < n && buf[pos] != '\n') {
            pos++; // header
        }
        pos++;
        HashMap<String, Stats> groups = new HashMap<>();
        while (pos < n) {
            if (buf[pos] == '\n' || buf[pos] == '\r' || buf[pos] == ' ') {
                pos++;
                continue;
            }
            int start = pos;
            while (buf[pos] != ',') {
                pos++;
            }
            String region = new String(buf, start, pos - start, StandardCharsets.US_ASCII);
            pos++;
            while (buf[pos] != ',') {
                pos++;
            }
            pos++;
            long units = 0;
            while (buf[pos] != ',') {
                units = units * 10 + (buf[pos++] - '0');
            }
            pos++;
            long cents = 0;
            int decimals = -1;
            while (pos < n && buf[pos] != '\n' && buf[pos] != '\r') {
                if (buf[pos] == '.') {
                    decimals = 0;
                } else {
                    cents = cents * 10 + (buf[pos] - '0');
                    if (decimals >= 0) {
                        decimals++;
                    }
                }
                pos++;
            }
            for (int d = Math.max(decimals, 0); d < 2; d++) {
                cents *= 10;
            }
            Stats s = groups.computeIfAbsent(region, k -> new Stats());
            s.rows++;
            s.units += units;
            s.cents += units * cents;
        }
        List<String> names = new ArrayList<>(groups.keySet());
        Collections.sort(names);
        Stats all = new Stats();
        StringBuilder out = new StringBuilder();
        for (String name : names) {
            Stats s = groups.get(name);
            out.append(name).append(' ').append(s.rows).append(' ').append(s.units).append(' ')
                    .append(money(s.cents)).append('\n');
            all.rows += s.rows;
            all.units += s.units;
            all.cents += s.cents;
        }
        out.append("total ").append(all.rows).append(' ').append(all.units).append(' ')
                .append(money(all.cents)).append('\n');
        System.out.print(out);
    }
}
