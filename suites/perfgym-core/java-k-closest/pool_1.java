// K closest points: (distance, index) packed into one long each, sorted as primitives.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.Arrays;
import java.util.StringTokenizer;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in), 1 << 16);
        String first = in.readLine();
        if (first == null || first.isBlank()) {
            return;
        }
        StringTokenizer st = new StringTokenizer(first);
        int n = Integer.parseInt(st.nextToken()), k = Integer.parseInt(st.nextToken());
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            st = new StringTokenizer(in.readLine());
            long x = Long.parseLong(st.nextToken()), y = Long.parseLong(st.nextToken());
            // d2 <= 2e12 < 2^41 and i < 2^21: the packed key orders by distance, then index.
            keys[i] = (x * x + y * y) << 21 | i;
        }
        Arrays.sort(keys);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < k && i < n; i++) {
            out.append(keys[i] & ((1 << 21) - 1)).append(' ').append(keys[i] >>> 21).append('\n');
        }
        System.out.print(out);
    }
}
