// CSV group-by: BufferedReader, String.split, BigDecimal money, a HashMap of regions.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;

public class Main {
    static final class Stats {
        long rows;
        long units;
        BigDecimal revenue = BigDecimal.ZERO;
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        if (in.readLine() == null) {
            return;
        }
        HashMap<String, Stats> groups = new HashMap<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split(",");
            Stats s = groups.computeIfAbsent(f[0], k -> new Stats());
            long units = Long.parseLong(f[2]);
            s.rows++;
            s.units += units;
            s.revenue = s.revenue.add(new BigDecimal(f[3]).multiply(BigDecimal.valueOf(units)));
        }
        List<String> names = new ArrayList<>(groups.keySet());
        Collections.sort(names);
        Stats all = new Stats();
        StringBuilder out = new StringBuilder();
        for (String name : names) {
            Stats s = groups.get(name);
            out.append(name).append(' ').append(s.rows).append(' ').append(s.units).append(' ')
                    .append(s.revenue.setScale(2)).append('\n');
            all.rows += s.rows;
            all.units += s.units;
            all.revenue = all.revenue.add(s.revenue);
        }
        out.append("total ").append(all.rows).append(' ').append(all.units).append(' ')
                .append(all.revenue.setScale(2)).append('\n');
        System.out.print(out);
    }
}
