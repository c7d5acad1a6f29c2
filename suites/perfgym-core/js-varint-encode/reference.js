const fs = require("fs");

const buf = fs.readFileSync(0);
const len = buf.length;
let pos = 0;
function nextInt() {
  while (pos < len && (buf[pos] < 48 || buf[pos] > 57)) pos++;
  let v = 0;
  while (pos < len && buf[pos] >= 48 && buf[pos] <= 57) v = v * 10 + (buf[pos++] - 48);
  return v;
}
const n = nextInt();
// Bytes are hashed as they are produced, so the encoded stream is never stored. FNV-1a:
// xor the byte in, multiply by the prime modulo 2^32 (Math.imul keeps it in 32 bits).
let hash = 0x811c9dc5 | 0;
let total = 0;
for (let i = 0; i < n; i++) {
  let v = nextInt();
  while (v >= 128) {
    hash = Math.imul(hash ^ ((v & 127) | 128), 0x01000193);
    v = Math.floor(v / 128); // values reach 2^32 - 1: '>>' would treat them as signed
    total++;
  }
  hash = Math.imul(hash ^ v, 0x01000193);
  total++;
}
console.log(total, (hash >>> 0).toString(16).padStart(8, "0"));
