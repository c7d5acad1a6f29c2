// Varint stream: decodes straight from the raw input bytes with a nibble table, no copies.
import java.io.IOException;

public class Main {
    public static void main(String[] args) throws IOException {
        byte[] in = System.in.readAllBytes();
        int p = 0, n = in.length;
        while (p < n && (in[p] < '0' || in[p] > '9')) {
            p++;
        }
        if (p == n) {
            return;
        }
        while (p < n && in[p] != '\n') {
            p++; // the count line: the stream itself says how many values there are
        }
        // Nibble value per ASCII byte; -1 ends the hex run.
        int[] nibble = new int[256];
        java.util.Arrays.fill(nibble, -1);
        for (int d = 0; d < 10; d++) {
            nibble['0' + d] = d;
        }
        for (int d = 0; d < 6; d++) {
            nibble['a' + d] = 10 + d;
            nibble['A' + d] = 10 + d;
        }
        while (p < n && nibble[in[p] & 0xff] < 0) {
            p++;
        }
        long count = 0, current = 0, acc = 0, min = Long.MAX_VALUE, max = Long.MIN_VALUE, sum = 0;
        int shift = 0;
        for (; p + 1 < n; p += 2) {
            int hi = nibble[in[p] & 0xff], lo = nibble[in[p + 1] & 0xff];
            if ((hi | lo) < 0) {
                break;
            }
            int b = hi << 4 | lo;
            acc |= (long) (b & 0x7f) << shift;
            if (b >= 0x80) {
                shift += 7;
                continue;
            }
            current += (acc >>> 1) ^ -(acc & 1);
            count++;
            if (current < min) {
                min = current;
            }
            if (current > max) {
                max = current;
            }
            sum += current;
            acc = 0;
            shift = 0;
        }
        if (count == 0) {
            min = 0;
            max = 0;
        }
        StringBuilder out = new StringBuilder();
        out.append(count).append(' ').append(current).append(' ').append(min).append(' ').append(max)
                .append(' ').append(sum);
        System.out.println(out);
    }
}
