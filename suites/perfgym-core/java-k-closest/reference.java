// K closest points: one pass over the raw bytes keeping a size-K max-heap of packed keys.
import java.io.IOException;

public class Main {
    static byte[] buf;
    static int pos;

    static long next() {
        while (pos < buf.length && buf[pos] != '-' && (buf[pos] < '0' || buf[pos] > '9')) {
            pos++;
        }
        boolean neg = buf[pos] == '-';
        if (neg) {
            pos++;
        }
        long v = 0;
        while (pos < buf.length && buf[pos] >= '0' && buf[pos] <= '9') {
            v = v * 10 + (buf[pos++] - '0');
        }
        return neg ? -v : v;
    }

    static void siftDown(long[] heap, int size, int i) {
        long item = heap[i];
        for (int child; (child = 2 * i + 1) < size; i = child) {
            if (child + 1 < size && heap[child + 1] > heap[child]) {
                child++;
            }
            if (heap[child] <= item) {
                break;
            }
            heap[i] = heap[child];
        }
        heap[i] = item;
    }

    public static void main(String[] args) throws IOException {
        buf = System.in.readAllBytes();
        int p0 = 0;
        while (p0 < buf.length && (buf[p0] < '0' || buf[p0] > '9')) {
            p0++;
        }
        if (p0 == buf.length) {
            return;
        }
        int n = (int) next(), k = (int) next();
        int size = 0;
        long[] heap = new long[Math.max(1, k)];
        for (int i = 0; i < n; i++) {
            long x = next(), y = next();
            // d2 <= 2e12 < 2^41 and i < 2^21: the packed key orders by distance, then index.
            long key = (x * x + y * y) << 21 | i;
            if (size < k) {
                int j = size++;
                while (j > 0 && heap[(j - 1) / 2] < key) {
                    heap[j] = heap[(j - 1) / 2];
                    j = (j - 1) / 2;
                }
                heap[j] = key;
            } else if (k > 0 && key < heap[0]) {
                heap[0] = key;
                siftDown(heap, size, 0);
            }
        }
        long[] best = java.util.Arrays.copyOf(heap, size);
        java.util.Arrays.sort(best);
        StringBuilder out = new StringBuilder();
        for (long key : best) {
            out.append(key & ((1 << 21) - 1)).append(' ').append(key >>> 21).append('\n');
        }
        System.out.print(out);
    }
}
