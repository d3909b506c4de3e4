// Writes test/durations.json: per test file, the seconds it took and the seconds of CPU it used in a whole
// run of the suite (test/measure-file.ts), which test/longest-first.ts orders the files by. Run it after
// adding a slow test file, or when one got much faster or slower: node scripts/test-durations.mjs
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const out = join(mkdtempSync(join(tmpdir(), 'sitefleet-durations-')), 'files.jsonl');
const run = spawnSync('npx', ['vitest', 'run'], { cwd: root, stdio: 'inherit', env: { ...process.env, SITEFLEET_TEST_MEASURE: out } });
if (run.status !== 0) {
  process.stderr.write('the suite did not pass: test/durations.json left as it was\n');
  process.exit(1);
}
const round = (n) => Math.round(n * 10) / 10;
const rows = readFileSync(out, 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line));
const table = Object.fromEntries(rows.map((r) => [relative(root, r.file), [round(r.s), round(r.cpu)]]).sort(([a], [b]) => a.localeCompare(b)));
// A line a file, as prettier writes it (the check in npm run lint).
const lines = Object.entries(table).map(([file, [s, cpu]]) => `  ${JSON.stringify(file)}: [${s}, ${cpu}]`);
writeFileSync(new URL('../test/durations.json', import.meta.url), `{\n${lines.join(',\n')}\n}\n`);
process.stdout.write(`test/durations.json: ${rows.length} files\n`);
