import { describe, expect, it, vi } from 'vitest';
import { RestoreTools } from '../../src/app/restore-tools.js';
import { RunScope } from '../../src/app/run-scope.js';
import { capturedIo } from '../../src/app/io.js';
import { terminalView } from '../../src/cli/terminal-view.js';
import type { Plan } from '../../src/plan/plan.js';
import { tempDir } from '../helpers/cli.js';

// The coordination this machine opens, with a `lost` signal the test pulls, as Redis going away would.
const { lost } = vi.hoisted(() => ({ lost: new AbortController() }));
vi.mock('../../src/coord/open.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/coord/open.js')>();
  return {
    ...actual,
    openCoordination: async (options: Parameters<typeof actual.openCoordination>[0]) => {
      const local = await actual.openCoordination(options);
      return Object.assign(Object.create(Object.getPrototypeOf(local) as object) as typeof local, local, { lost: lost.signal });
    },
  };
});

/**
 * `restore` listens for a lost coordination as a run does: once the shared lock and budget cannot be
 * trusted, no restore starts (another machine's run may be writing to the same sites), and the
 * command says why instead of reporting an interruption.
 */
describe('restore and a lost coordination', () => {
  it('stops starting restores when the coordination is lost, and says why (not an interruption)', async () => {
    const io = capturedIo({ env: { SITEFLEET_TOKEN: 't' } });
    const plan = { company: '0f1e2d3c-4b5a-4697-8877-665544332211', tasks: [], settings: {} } as unknown as Plan;
    const globals = { io, view: terminalView(io, () => true), baseUrl: 'http://127.0.0.1:9', stateDir: tempDir() };
    await RunScope.with(globals, undefined, async (scope) => {
      const tools = new RestoreTools(scope, plan);
      try {
        expect(tools.lost).toBeUndefined();
        lost.abort(new Error('lost contact with Redis at redis://127.0.0.1:6390/0'));
        expect(tools.lost?.message).toBe('lost contact with Redis at redis://127.0.0.1:6390/0');
        expect(tools.interrupted).toBe(false);
      } finally {
        await tools.close();
      }
    });
  });
});
