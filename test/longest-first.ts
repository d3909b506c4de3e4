import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Per file, measured in a whole run of the suite: [seconds it took, seconds of CPU it and its child processes used]. */
const MEASURED = JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8')) as Record<string, [number, number]>;
const ROOT = new URL('..', import.meta.url).pathname;
/** A file that keeps a core busy for this long (Chromium's, the ones of many processes) is one to spread out. */
const HEAVY_CPU_S = 5;
/** Of the long files, this many others start between two heavy ones. */
const SPREAD = 5;

/**
 * The order test files start in, also on a fresh clone (vitest orders by durations it cached, and a
 * clone has none). The longest first, so none of them is the run's tail; but the heavy ones spread
 * among the rest, never started together: four Chromium files at once on two cores took two minutes
 * each, past their timeouts, while the files that mostly wait (on a rate window, an operation, a child
 * process) left the cores idle later. A file not measured yet counts as a long one under test/cli/,
 * else by its size.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const measured = (f: TestSpecification): [number, number] =>
      MEASURED[relative(ROOT, f.moduleId)] ?? (f.moduleId.includes('/test/cli/') ? [10, 1] : [statSync(f.moduleId).size / 1e6, 0]);
    const byWall = [...files].sort((a, b) => measured(b)[0] - measured(a)[0]);
    const heavy = byWall.filter((f) => measured(f)[1] >= HEAVY_CPU_S).sort((a, b) => measured(b)[1] - measured(a)[1]);
    const rest = byWall.filter((f) => measured(f)[1] < HEAVY_CPU_S);
    const order: TestSpecification[] = [];
    for (const [i, file] of heavy.entries()) order.push(file, ...rest.slice(i * SPREAD, (i + 1) * SPREAD));
    return [...order, ...rest.slice(heavy.length * SPREAD)];
  }
}
