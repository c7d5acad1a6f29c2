const fs = require("fs");

const lines = fs.readFileSync(0, "utf8").split("\n");
const [m, bits, q] = lines[0].split(" ").map(Number);
// One byte per bit: no strings in the inner loop, but still one step per bit.
const sets = [];
for (let i = 0; i < m; i++) {
  const row = new Uint8Array(bits);
  const line = lines[1 + i];
  for (let t = 0; t < bits / 4; t++) {
    const v = parseInt(line[t], 16);
    for (let b = 0; b < 4; b++) row[4 * t + b] = (v >> (3 - b)) & 1;
  }
  sets.push(row);
}
let total = 0;
let best = 0;
for (let k = 0; k < q; k++) {
  const [i, j] = lines[1 + m + k].split(" ").map(Number);
  const a = sets[i];
  const b = sets[j];
  let count = 0;
  for (let t = 0; t < bits; t++) count += a[t] & b[t];
  total += count;
  if (count > best) best = count;
}
console.log(total, best);
