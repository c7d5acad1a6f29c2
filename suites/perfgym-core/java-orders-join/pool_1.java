// Orders join: customers sorted by id once, each order found by binary search (sort-based join).
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.Arrays;
import java.util.Map;
import java.util.StringTokenizer;
import java.util.TreeMap;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in), 1 << 16);
        String first = in.readLine();
        if (first == null || first.isBlank()) {
            return;
        }
        StringTokenizer st = new StringTokenizer(first);
        int c = Integer.parseInt(st.nextToken()), o = Integer.parseInt(st.nextToken());
        String[][] customers = new String[c][];
        for (int i = 0; i < c; i++) {
            st = new StringTokenizer(in.readLine());
            customers[i] = new String[] {st.nextToken(), st.nextToken()};
        }
        Arrays.sort(customers, (a, b) -> a[0].compareTo(b[0]));
        String[] ids = new String[c];
        for (int i = 0; i < c; i++) {
            ids[i] = customers[i][0];
        }
        TreeMap<String, long[]> byCountry = new TreeMap<>();
        long unmatched = 0, unmatchedAmount = 0;
        for (int i = 0; i < o; i++) {
            st = new StringTokenizer(in.readLine());
            st.nextToken();
            String cust = st.nextToken();
            long amount = Long.parseLong(st.nextToken());
            int at = Arrays.binarySearch(ids, cust);
            if (at < 0) {
                unmatched++;
                unmatchedAmount += amount;
            } else {
                long[] agg = byCountry.computeIfAbsent(customers[at][1], k -> new long[2]);
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
