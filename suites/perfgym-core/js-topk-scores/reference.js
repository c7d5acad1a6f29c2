const fs = require("fs");

const buf = fs.readFileSync(0);
const len = buf.length;
let pos = 0;
// Integers are read straight from the bytes: no strings, no per-line allocation.
function next() {
  while (pos < len && (buf[pos] < 48 || buf[pos] > 57)) pos++;
  let v = 0;
  while (pos < len && buf[pos] >= 48 && buf[pos] <= 57) v = v * 10 + (buf[pos++] - 48);
  return v;
}
const n = next();
const k = next();
// The current best k rows, kept sorted best-first in two typed arrays. A new row is compared
// with the weakest kept row first; almost every row fails that one test, so the scan is O(n).
const topId = new Float64Array(k + 1);
const topScore = new Float64Array(k + 1);
let size = 0;
for (let i = 0; i < n; i++) {
  const id = next();
  const score = next();
  if (size === k) {
    const ws = topScore[k - 1];
    if (score < ws || (score === ws && id > topId[k - 1])) continue;
  }
  let j = size < k ? size++ : k - 1;
  while (j > 0 && (topScore[j - 1] < score || (topScore[j - 1] === score && topId[j - 1] > id))) {
    topScore[j] = topScore[j - 1];
    topId[j] = topId[j - 1];
    j--;
  }
  topScore[j] = score;
  topId[j] = id;
}
const out = [];
for (let i = 0; i < size; i++) out.push(`${topId[i]} ${topScore[i]}`);
if (out.length) console.log(out.join("\n"));
