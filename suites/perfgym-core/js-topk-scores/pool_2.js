const fs = require("fs");

const lines = fs.readFileSync(0, "utf8").split("\n");
const [n, k] = lines[0].split(" ").map(Number);
// A size-k min-heap of the best rows so far; its root is the weakest of them.
const heap = [];
const worse = (a, b) => a.score < b.score || (a.score === b.score && a.id > b.id);
function siftDown(i) {
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < heap.length && worse(heap[l], heap[m])) m = l;
    if (r < heap.length && worse(heap[r], heap[m])) m = r;
    if (m === i) return;
    [heap[i], heap[m]] = [heap[m], heap[i]];
    i = m;
  }
}
function siftUp(i) {
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!worse(heap[i], heap[p])) return;
    [heap[i], heap[p]] = [heap[p], heap[i]];
    i = p;
  }
}
for (let i = 1; i <= n; i++) {
  const [id, score] = lines[i].split(" ");
  const row = { id: Number(id), score: Number(score) };
  if (heap.length < k) {
    heap.push(row);
    siftUp(heap.length - 1);
  } else if (k > 0 && worse(heap[0], row)) {
    heap[0] = row;
    siftDown(0);
  }
}
heap.sort((a, b) => b.score - a.score || a.id - b.id);
if (heap.length) console.log(heap.map((r) => `${r.id} ${r.score}`).join("\n"));
