const fs = require("fs");

const tokens = fs.readFileSync(0, "utf8").split(/\s+/);
const n = Number(tokens[0]);
const k = Number(tokens[1]);
const ids = new Float64Array(n);
const scores = new Float64Array(n);
for (let i = 0; i < n; i++) {
  ids[i] = Number(tokens[2 + 2 * i]);
  scores[i] = Number(tokens[3 + 2 * i]);
}
// Sort row indices rather than row objects: less allocation, still O(n log n) comparisons.
const order = new Uint32Array(n);
for (let i = 0; i < n; i++) order[i] = i;
order.sort((a, b) => scores[b] - scores[a] || ids[a] - ids[b]);
const out = [];
for (let i = 0; i < Math.min(k, n); i++) out.push(`${ids[order[i]]} ${scores[order[i]]}`);
if (out.length) console.log(out.join("\n"));
