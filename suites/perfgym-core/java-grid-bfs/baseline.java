// Grid BFS: a LinkedList of int[] cells as the queue and a HashSet of "r,c" strings as visited.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.HashMap;
import java.util.LinkedList;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
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
        HashMap<String, Integer> dist = new HashMap<>();
        LinkedList<int[]> queue = new LinkedList<>();
        dist.put(sr + "," + sc, 0);
        queue.add(new int[] {sr, sc});
        int[][] steps = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        int target = -1;
        while (!queue.isEmpty()) {
            int[] cell = queue.removeFirst();
            int d = dist.get(cell[0] + "," + cell[1]);
            if (grid[cell[0]][cell[1]] == 'T' && target < 0) {
                target = d;
            }
            for (int[] s : steps) {
                int r = cell[0] + s[0], c = cell[1] + s[1];
                if (r < 0 || r >= rows || c < 0 || c >= cols || grid[r][c] == '#') {
                    continue;
                }
                String key = r + "," + c;
                if (!dist.containsKey(key)) {
                    dist.put(key, d + 1);
                    queue.add(new int[] {r, c});
                }
            }
        }
        System.out.println(target + " " + dist.size());
    }
}
