import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/longest-first.js';
import { MOCKING } from './test/mocking-files.js';

export default defineConfig({
  test: {
    // A test waits for events, never a time; this bound only ends one that hangs. Beside a CPU hog the heaviest
    // CLI tests (Chromium, several processes, isolation nights) took 30-40 s, so 30 s failed them for the machine alone.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['./test/bundle-is-current.ts'],
    // scripts/test-durations.mjs: each file's time and CPU, for test/durations.json (longest-first.ts).
    setupFiles: process.env.SITEFLEET_TEST_MEASURE ? ['./test/measure-file.ts'] : [],
    // Most of a test's time is spent waiting (for the simulator's operations, a lease, a child process),
    // not computing: three workers a core keep the cores busy (vitest's default is one fewer than the
    // cores, one worker on a 2-core machine). Measured on 2 idle cores, the whole suite: 6 workers 235 s,
    // 9 workers 247 s (its ~290 s of CPU bind it then).
    maxWorkers: Math.max(2, 3 * availableParallelism()),
    reporters: ['default', './test/plain-summary-reporter.ts'],
    // The longest files first, the CPU-heavy ones spread among them (test/durations.json).
    sequence: { sequencer: LongestFirst },
    // A worker imports the sources once for all the files it runs, not once a file: with a fresh module
    // graph each, the imports took as long as the unit tests themselves (1 s a file, 108 s of 110 files'
    // 240 s). Files share nothing else: each starts its own simulator, servers and temp dirs. The one
    // file that replaces a module (vi.mock) keeps a graph of its own, so no other file sees its stand-in.
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: MOCKING, isolate: false } },
      { extends: true, test: { name: 'isolated', include: MOCKING, isolate: true } },
    ],
  },
});
