const fs = require("fs");

const lines = fs.readFileSync(0, "utf8").split("\n");
const [n, k] = lines[0].split(" ").map(Number);
const rows = [];
for (let i = 1; i <= n; i++) {
  const [id, score] = lines[i].split(" ");
  rows.push({ id: Number(id), score: Number(score) });
}
rows.sort((a, b) => b.score - a.score || a.id - b.id);
const out = [];
for (const row of rows.slice(0, k)) out.push(`${row.id} ${row.score}`);
if (out.length) console.log(out.join("\n"));
