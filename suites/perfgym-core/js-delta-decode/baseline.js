const fs = require("fs");

const lines = fs.readFileSync(0, "utf8").split("\n");
const [n, q] = lines[0].split(" ").map(Number);
const deltas = lines[1].split(" ").map(Number);
const values = [];
for (let i = 0; i < n; i++) values.push(i === 0 ? deltas[0] : values[i - 1] + deltas[i]);
let most = -Infinity;
let least = Infinity;
let negatives = 0;
for (let k = 0; k < q; k++) {
  const [l, r] = lines[2 + k].split(" ").map(Number);
  const sum = values.slice(l - 1, r).reduce((acc, v) => acc + v, 0);
  if (sum > most) most = sum;
  if (sum < least) least = sum;
  if (sum < 0) negatives++;
}
console.log(most, least, negatives);
