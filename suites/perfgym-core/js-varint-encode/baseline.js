const fs = require("fs");

const tokens = fs.readFileSync(0, "utf8").trim().split(/\s+/);
const n = Number(tokens[0]);
const bytes = [];
for (let i = 1; i <= n; i++) {
  // Split the binary digits into groups of 7, least significant group first.
  const bits = Number(tokens[i]).toString(2);
  const groups = [];
  for (let end = bits.length; end > 0; end -= 7) groups.push(bits.slice(Math.max(0, end - 7), end));
  const encoded = groups.map((g, k) => parseInt(g, 2) + (k < groups.length - 1 ? 128 : 0));
  for (const b of encoded) bytes.push(b);
}
let hash = 0x811c9dc5;
for (const b of bytes) {
  hash ^= b;
  hash = Math.imul(hash, 0x01000193) >>> 0;
}
console.log(bytes.length, hash.toString(16).padStart(8, "0"));
