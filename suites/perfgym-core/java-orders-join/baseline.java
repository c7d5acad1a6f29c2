// Orders join: for each order, scan the customer list for its id (nested-loop join).
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String first = in.readLine();
        if (first == null || first.isBlank()) {
            return;
        }
        String[] counts = first.trim().split("\\s+");
        int c = Integer.parseInt(counts[0]), o = Integer.parseInt(counts[1]);
        List<String[]> customers = new ArrayList<>();
        for (int i = 0; i < c; i++) {
            customers.add(in.readLine().trim().split("\\s+"));
        }
        TreeMap<String, long[]> byCountry = new TreeMap<>();
        long unmatched = 0, unmatchedAmount = 0;
        for (int i = 0; i < o; i++) {
            String[] f = in.readLine().trim().split("\\s+");
            long amount = Long.parseLong(f[2]);
            String country = null;
            for (String[] cust : customers) {
                if (cust[0].equals(f[1])) {
                    country = cust[1];
                    break;
                }
            }
            if (country == null) {
                unmatched++;
                unmatchedAmount += amount;
            } else {
                long[] agg = byCountry.computeIfAbsent(country, k -> new long[2]);
                agg[0]++;
                agg[1] += amount;
            }
        }
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, long[]> e : byCountry.entrySet()) {
            out.append(e.getKey()).append(' ').append(e.getValue()[0]).append(' ')
                    .append(e.getValue()[1]).append('\n');
        }
        out.append("unmatched ").append(unmatched).append(' ').append(unmatchedAmount).append('\n');
        System.out.print(out);
    }
}
