// Varint stream: hex decoded with Character.digit into a byte array, then decoded in one pass.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in), 1 << 16);
        String first = in.readLine();
        if (first == null || first.isBlank()) {
            return;
        }
        String hex = in.readLine();
        if (hex == null) {
            hex = "";
        }
        hex = hex.trim();
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (Character.digit(hex.charAt(2 * i), 16) << 4
                    | Character.digit(hex.charAt(2 * i + 1), 16));
        }
        long count = 0, current = 0, acc = 0, min = Long.MAX_VALUE, max = Long.MIN_VALUE, sum = 0;
        int shift = 0;
        for (byte b : bytes) {
            acc |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) != 0) {
                shift += 7;
                continue;
            }
            current += (acc >>> 1) ^ -(acc & 1);
            count++;
            min = Math.min(min, current);
            max = Math.max(max, current);
            sum += current;
            acc = 0;
            shift = 0;
        }
        if (count == 0) {
            min = 0;
            max = 0;
        }
        System.out.println(count + " " + current + " " + min + " " + max + " " + sum);
    }
}
