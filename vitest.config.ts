import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/longest-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A test waits for events, never a time; this bound only ends one that hangs. Beside a CPU hog the heaviest
    // CLI tests (Chromium, several processes, isolation nights) took 30-40 s, so 30 s failed them for the machine alone.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most of a test's time is spent waiting (for the simulator's operations, a lease, a child process),
    // not computing: three workers a core keep the cores busy (vitest's default is one fewer than the
    // cores, one worker on a 2-core machine). Measured on 2 cores: 4 workers 177 s, 6 workers 147 s.
    maxWorkers: Math.max(2, 3 * availableParallelism()),
    reporters: ['default', './test/plain-summary-reporter.ts'],
    sequence: { sequencer: LongestFirst },
  },
});
