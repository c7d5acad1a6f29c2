// Varint stream: hex pairs parsed with substring + parseInt into a boxed byte list, values boxed too.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String first = in.readLine();
        if (first == null || first.isBlank()) {
            return;
        }
        String hex = in.readLine();
        if (hex == null) {
            hex = "";
        }
        hex = hex.trim();
        List<Integer> bytes = new ArrayList<>();
        for (int i = 0; i + 1 < hex.length(); i += 2) {
            bytes.add(Integer.parseInt(hex.substring(i, i + 2), 16));
        }
        List<Long> values = new ArrayList<>();
        long current = 0, acc = 0;
        int shift = 0;
        for (int b : bytes) {
            acc |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) != 0) {
                shift += 7;
                continue;
            }
            long delta = (acc >>> 1) ^ -(acc & 1);
            current += delta;
            values.add(current);
            acc = 0;
            shift = 0;
        }
        long last = values.isEmpty() ? 0 : values.get(values.size() - 1);
        long min = values.stream().mapToLong(Long::longValue).min().orElse(0);
        long max = values.stream().mapToLong(Long::longValue).max().orElse(0);
        long sum = values.stream().mapToLong(Long::longValue).sum();
        System.out.println(values.size() + " " + last + " " + min + " " + max + " " + sum);
    }
}
