// Grid BFS: an ArrayDeque of int[] cells and a 2-D int distance array.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.ArrayDeque;
import java.util.Arrays;

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
        int[][] dist = new int[rows][cols];
        for (int[] row : dist) {
            Arrays.fill(row, -1);
        }
        ArrayDeque<int[]> queue = new ArrayDeque<>();
        dist[sr][sc] = 0;
        queue.add(new int[] {sr, sc});
        int[][] steps = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        int target = -1, reached = 1;
        while (!queue.isEmpty()) {
            int[] cell = queue.poll();
            int d = dist[cell[0]][cell[1]];
            if (grid[cell[0]][cell[1]] == 'T' && target < 0) {
                target = d;
            }
            for (int[] s : steps) {
                int r = cell[0] + s[0], c = cell[1] + s[1];
                if (r < 0 || r >= rows || c < 0 || c >= cols || grid[r][c] == '#' || dist[r][c] >= 0) {
                    continue;
                }
                dist[r][c] = d + 1;
                reached++;
                queue.add(new int[] {r, c});
            }
        }
        System.out.println(target + " " + reached);
    }
}
