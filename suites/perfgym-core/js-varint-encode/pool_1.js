const fs = require("fs");

const tokens = fs.readFileSync(0, "utf8").trim().split(/\s+/);
const n = Number(tokens[0]);
const bytes = [];
for (let i = 1; i <= n; i++) {
  let v = Number(tokens[i]);
  while (v >= 128) {
    bytes.push((v % 128) + 128);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
}
let hash = 0x811c9dc5;
for (const b of bytes) hash = Math.imul(hash ^ b, 0x01000193) >>> 0;
console.log(bytes.length, hash.toString(16).padStart(8, "0"));
