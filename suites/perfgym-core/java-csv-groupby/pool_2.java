// CSV group-by: BufferedReader, fields cut with indexOf, money as long cents, a HashMap of regions.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
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

    static long parseCents(String s, int from, int to) {
        long whole = 0, frac = 0;
        int i = from;
        for (; i < to && s.charAt(i) != '.'; i++) {
            whole = whole * 10 + (s.charAt(i) - '0');
        }
        int digits = 0;
        for (i++; i < to; i++, digits++) {
            frac = frac * 10 + (s.charAt(i) - '0');
        }
        for (; digits < 2; digits++) {
            frac *= 10;
        }
        return whole * 100 + frac;
    }

    static String money(long cents) {
        return (cents / 100) + "." + (cents % 100 < 10 ? "0" : "") + (cents % 100);
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in), 1 << 16);
        if (in.readLine() == null) {
            return;
        }
        HashMap<String, Stats> groups = new HashMap<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            int a = line.indexOf(','), b = line.indexOf(',', a + 1), c = line.indexOf(',', b + 1);
            Stats s = groups.computeIfAbsent(line.substring(0, a), k -> new Stats());
            long units = Long.parseLong(line, b + 1, c, 10);
            s.rows++;
            s.units += units;
            s.cents += units * parseCents(line, c + 1, line.length());
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
