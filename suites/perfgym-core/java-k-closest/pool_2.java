// K closest points: a bounded PriorityQueue (max-heap) of packed keys over tokenized lines.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.Collections;
import java.util.PriorityQueue;
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
        PriorityQueue<Long> heap = new PriorityQueue<>(Collections.reverseOrder());
        for (int i = 0; i < n; i++) {
            st = new StringTokenizer(in.readLine());
            long x = Long.parseLong(st.nextToken()), y = Long.parseLong(st.nextToken());
            // d2 <= 2e12 < 2^41 and i < 2^21: the packed key orders by distance, then index.
            long key = (x * x + y * y) << 21 | i;
            if (heap.size() < k) {
                heap.add(key);
            } else if (k > 0 && key < heap.peek()) {
                heap.poll();
                heap.add(key);
            }
        }
        long[] best = new long[heap.size()];
        for (int i = best.length - 1; i >= 0; i--) {
            best[i] = heap.poll();
        }
        StringBuilder out = new StringBuilder();
        for (long key : best) {
            out.append(key & ((1 << 21) - 1)).append(' ').append(key >>> 21).append('\n');
        }
        System.out.print(out);
    }
}
