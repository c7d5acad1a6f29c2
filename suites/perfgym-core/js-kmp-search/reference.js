const fs = require("fs");

const buf = fs.readFileSync(0);
// Work on the raw bytes: line boundaries found once, no string copies of the text.
let end = buf.indexOf(10);
if (end < 0) end = buf.length;
const n = end;
let pos = end + 1;
function nextLine() {
  let e = buf.indexOf(10, pos);
  if (e < 0) e = buf.length;
  const line = buf.subarray(pos, e);
  pos = e + 1;
  return line;
}
const q = Number(nextLine().toString());
const out = [];
for (let k = 0; k < q; k++) {
  const p = nextLine();
  const m = p.length;
  // Knuth-Morris-Pratt: fail[j] is the length of the longest proper border of p[0..j], so
  // after a mismatch the text position never moves back and each byte is examined O(1) times
  // on average.
  const fail = new Int32Array(m);
  for (let i = 1, b = 0; i < m; i++) {
    while (b > 0 && p[i] !== p[b]) b = fail[b - 1];
    if (p[i] === p[b]) b++;
    fail[i] = b;
  }
  let count = 0;
  for (let i = 0, j = 0; i < n; i++) {
    const c = buf[i];
    while (j > 0 && c !== p[j]) j = fail[j - 1];
    if (c === p[j]) j++;
    if (j === m) {
      count++;
      j = fail[m - 1];
    }
  }
  out.push(count);
}
console.log(out.join("\n"));
