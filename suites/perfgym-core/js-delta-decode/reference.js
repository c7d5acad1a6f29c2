const fs = require("fs");

const buf = fs.readFileSync(0);
const len = buf.length;
let pos = 0;
// Signed integers parsed straight from the bytes.
function nextInt() {
  while (pos < len && buf[pos] !== 45 && (buf[pos] < 48 || buf[pos] > 57)) pos++;
  let sign = 1;
  if (buf[pos] === 45) {
    sign = -1;
    pos++;
  }
  let v = 0;
  while (pos < len && buf[pos] >= 48 && buf[pos] <= 57) v = v * 10 + (buf[pos++] - 48);
  return sign * v;
}
const n = nextInt();
const q = nextInt();
// Decoding and prefix summing are one pass: prefix[i] = values[0] + ... + values[i-1].
// Every partial sum stays far below 2^53, so doubles are exact.
const prefix = new Float64Array(n + 1);
let value = 0;
for (let i = 0; i < n; i++) {
  value += nextInt();
  prefix[i + 1] = prefix[i] + value;
}
let most = -Infinity;
let least = Infinity;
let negatives = 0;
for (let k = 0; k < q; k++) {
  const l = nextInt();
  const r = nextInt();
  const sum = prefix[r] - prefix[l - 1];
  if (sum > most) most = sum;
  if (sum < least) least = sum;
  if (sum < 0) negatives++;
}
console.log(most, least, negatives);
