// CSV group-by: Scanner line by line, String.split, BigDecimal money, a TreeMap of regions.
import java.math.BigDecimal;
import java.util.Map;
import java.util.Scanner;
import java.util.TreeMap;

public class Main {
    static final class Stats {
        long rows;
        long units;
        BigDecimal revenue = BigDecimal.ZERO;
    }

    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        if (!in.hasNextLine()) {
            return;
        }
        in.nextLine(); // header
        TreeMap<String, Stats> groups = new TreeMap<>();
        while (in.hasNextLine()) {
            String line = in.nextLine();
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
        Stats all = new Stats();
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, Stats> e : groups.entrySet()) {
            Stats s = e.getValue();
            out.append(e.getKey()).append(' ').append(s.rows).append(' ').append(s.units).append(' ')
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
