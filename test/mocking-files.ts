/**
 * The test files that replace a module with vi.mock: each runs in a module graph of its own
 * (vitest.config.ts, the isolated project), so no other file of its worker sees the stand-in.
 * test/mocking.test.ts holds this list to what the files do.
 */
export const MOCKING = ['test/cli/restore-lost-coordination.test.ts'];
