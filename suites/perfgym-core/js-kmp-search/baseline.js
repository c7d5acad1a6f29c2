const fs = require("fs");

const lines = fs.readFileSync(0, "utf8").split("\n");
const text = lines[0];
const q = Number(lines[1]);
const out = [];
for (let k = 0; k < q; k++) {
  const p = lines[2 + k];
  let count = 0;
  // Try every alignment and compare character by character.
  for (let i = 0; i + p.length <= text.length; i++) {
    let j = 0;
    while (j < p.length && text[i + j] === p[j]) j++;
    if (j === p.length) count++;
  }
  out.push(count);
}
console.log(out.join("\n"));
