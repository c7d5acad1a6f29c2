// Grid BFS: flat byte grid with a wall border, an int array as the queue, levels counted in place.
import java.io.IOException;

public class Main {
    public static void main(String[] args) throws IOException {
        byte[] in = System.in.readAllBytes();
        int p = 0;
        int rows = 0, cols = 0;
        while (in[p] < '0' || in[p] > '9') {
            p++;
        }
        while (in[p] >= '0' && in[p] <= '9') {
            rows = rows * 10 + (in[p++] - '0');
        }
        while (in[p] < '0' || in[p] > '9') {
            p++;
        }
        while (in[p] >= '0' && in[p] <= '9') {
            cols = cols * 10 + (in[p++] - '0');
        }
        // One extra wall column and wall rows above and below remove all bounds checks.
        int w = cols + 1;
        byte[] open = new byte[(rows + 2) * w + 1];
        int start = -1, target = -1;
        for (int r = 0; r < rows; r++) {
            while (in[p] != '.' && in[p] != '#' && in[p] != 'S' && in[p] != 'T') {
                p++;
            }
            int base = (r + 1) * w;
            for (int c = 0; c < cols; c++, p++) {
                byte b = in[p];
                open[base + c] = (byte) (b == '#' ? 0 : 1);
                if (b == 'S') {
                    start = base + c;
                } else if (b == 'T') {
                    target = base + c;
                }
            }
        }
        int[] queue = new int[rows * cols];
        int head = 0, tail = 0;
        queue[tail++] = start;
        open[start] = 0;
        int level = 0, found = -1;
        int[] steps = {1, -1, w, -w};
        // Process the queue one BFS level at a time so the distance is a counter, not an array.
        while (head < tail) {
            int levelEnd = tail;
            for (; head < levelEnd; head++) {
                int cell = queue[head];
                if (cell == target) {
                    found = level;
                }
                for (int s : steps) {
                    int nb = cell + s;
                    if (open[nb] != 0) {
                        open[nb] = 0;
                        queue[tail++] = nb;
                    }
                }
            }
            level++;
        }
        System.out.println(new StringBuilder().append(found).append(' ').append(tail));
    }
}
