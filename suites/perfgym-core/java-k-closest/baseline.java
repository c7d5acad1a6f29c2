// K closest points: sorts a list of point objects, comparing Euclidean distances in the comparator.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

public class Main {
    record Point(int index, long x, long y) {
        double distance() {
            return Math.sqrt((double) (x * x + y * y));
        }
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String first = in.readLine();
        if (first == null || first.isBlank()) {
            return;
        }
        String[] nk = first.trim().split(" ");
        int n = Integer.parseInt(nk[0]), k = Integer.parseInt(nk[1]);
        List<Point> points = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String[] f = in.readLine().trim().split(" ");
            points.add(new Point(i, Long.parseLong(f[0]), Long.parseLong(f[1])));
        }
        Collections.sort(points, (a, b) -> {
            int c = Double.compare(a.distance(), b.distance());
            return c != 0 ? c : Integer.compare(a.index(), b.index());
        });
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < k && i < n; i++) {
            Point p = points.get(i);
            out.append(p.index()).append(' ').append(p.x() * p.x() + p.y() * p.y()).append('\n');
        }
        System.out.print(out);
    }
}
