import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most of a test's time is spent waiting (for the simulator's operations, a lease, a child process),
    // not computing: twice as many workers as cores keeps the cores busy (vitest's default is one fewer
    // than the cores, one worker on a 2-core machine).
    maxWorkers: Math.max(2, 2 * availableParallelism()),
    reporters: ['default', './test/plain-summary-reporter.ts'],
  },
});
