import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

/**
 * With SITEFLEET_TEST_MEASURE=FILE (scripts/test-durations.mjs sets it): each test file's seconds and
 * seconds of CPU (its worker's and its child processes', Chromium's among them, from Linux's
 * /proc/self/stat), a JSON line each, appended to FILE.
 */
const OUT = process.env.SITEFLEET_TEST_MEASURE!;
const TICKS_PER_S = 100;

function cpuTicks(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // utime, stime, cutime, cstime: fields 14-17 of proc(5), counted from the state (field 3) here.
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
}

let file = '';
let ticks = 0;
let started = 0;
// vitest hands a hook's suite as its second argument; the first, the context, must be destructured.
// eslint-disable-next-line no-empty-pattern
beforeAll(({}: object, suite: { file?: { filepath: string }; filepath?: string }) => {
  file = suite.filepath ?? suite.file?.filepath ?? '';
  ticks = cpuTicks();
  started = performance.now();
});
afterAll(() => {
  const line = { file, s: (performance.now() - started) / 1000, cpu: (cpuTicks() - ticks) / TICKS_PER_S };
  appendFileSync(OUT, `${JSON.stringify(line)}\n`);
});
