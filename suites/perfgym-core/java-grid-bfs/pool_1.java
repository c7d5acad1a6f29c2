// Grid BFS: an ArrayDeque of int[] cells and a HashMap of boxed cell numbers to distances.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.ArrayDeque;
import java.util.HashMap;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in), 1 << 16);
        String[] dims = in.readLine().trim().split(" ");
        int rows = Integer.parseInt(dims[0]), cols = Integer.parseInt(dims[1]);
        char[][] grid = new char[rows][];
        int sr = 0, sc = 0;
        for (int r = 0; r < rows; r++) {
            grid[r] = in.readLine().trim().toCharArray();
            for (int c = 0; c < cols; c++) {
                if (grid[r][c] == 'S') {
                    sr = r;
                    sc = c;
                }
            }
        }
        HashMap<Integer, Integer> dist = new HashMap<>();
        ArrayDeque<int[]> queue = new ArrayDeque<>();
        dist.put(sr * cols + sc, 0);
        queue.add(new int[] {sr, sc, 0});
        int[][] steps = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        int target = -1;
        while (!queue.isEmpty()) {
            int[] cell = queue.poll();
            if (grid[cell[0]][cell[1]] == 'T' && target < 0) {
                target = cell[2];
            }
            for (int[] s : steps) {
                int r = cell[0] + s[0], c = cell[1] + s[1];
                if (r < 0 || r >= rows || c < 0 || c >= cols || grid[r][c] == '#') {
                    continue;
                }
                if (dist.putIfAbsent(r * cols + c, cell[2] + 1) == null) {
                    queue.add(new int[] {r, c, cell[2] + 1});
                }
            }
        }
        System.out.println(target + " " + dist.size());
    }
}
