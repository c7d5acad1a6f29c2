const fs = require("fs");

const lines = fs.readFileSync(0, "utf8").split("\n");
const [m, bits, q] = lines[0].split(" ").map(Number);
// Each set as a string of '0' and '1' characters, one per bit.
const sets = [];
for (let i = 0; i < m; i++) {
  let s = "";
  for (const c of lines[1 + i]) s += parseInt(c, 16).toString(2).padStart(4, "0");
  sets.push(s);
}
let total = 0;
let best = 0;
for (let k = 0; k < q; k++) {
  const [i, j] = lines[1 + m + k].split(" ").map(Number);
  const a = sets[i];
  const b = sets[j];
  let count = 0;
  for (let t = 0; t < bits; t++) {
    if (a[t] === "1" && b[t] === "1") count++;
  }
  total += count;
  if (count > best) best = count;
}
console.log(total, best);
