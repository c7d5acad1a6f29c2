const fs = require("fs");

const buf = fs.readFileSync(0);
let pos = 0;
function nextInt() {
  while (buf[pos] < 48 || buf[pos] > 57) pos++;
  let v = 0;
  while (pos < buf.length && buf[pos] >= 48 && buf[pos] <= 57) v = v * 10 + (buf[pos++] - 48);
  return v;
}
function hexValue(c) {
  return c <= 57 ? c - 48 : c - 87;
}
const m = nextInt();
const bits = nextInt();
const q = nextInt();
const words = bits / 32;
// All sets packed into one flat array of 32-bit words, decoded straight from the bytes.
const packed = new Int32Array(m * words);
for (let i = 0; i < m; i++) {
  while (buf[pos] === 10 || buf[pos] === 13 || buf[pos] === 32) pos++;
  for (let w = 0; w < words; w++) {
    let x = 0;
    for (let d = 0; d < 8; d++) x = (x << 4) | hexValue(buf[pos++]);
    packed[i * words + w] = x;
  }
}
// Branch-free SWAR popcount: bit counts of pairs, nibbles, then bytes summed by a multiply.
function popcount(x) {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}
let total = 0;
let best = 0;
for (let k = 0; k < q; k++) {
  const a = nextInt() * words;
  const b = nextInt() * words;
  let count = 0;
  for (let w = 0; w < words; w++) count += popcount(packed[a + w] & packed[b + w]);
  total += count;
  if (count > best) best = count;
}
console.log(total, best);
