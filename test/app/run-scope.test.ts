import type { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { capturedIo } from '../../src/app/io.js';
import { RunScope, type LockRequest } from '../../src/app/run-scope.js';
import { terminalView } from '../../src/cli/terminal-view.js';
import { LockedError } from '../../src/errors.js';
import { tempDir } from '../helpers/cli.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';

function globalsIn(stateDir: string) {
  const io = capturedIo({ env: { SITEFLEET_TOKEN: 't' } });
  return { io, view: terminalView(io, () => true), baseUrl: 'http://127.0.0.1:9', stateDir };
}

/** Ctrl-C handlers on the io (capturedIo's signals are an EventEmitter). */
const handlers = (globals: ReturnType<typeof globalsIn>) => (globals.io.signals as unknown as EventEmitter).listenerCount('SIGINT');

const lock: LockRequest = { scope: { kind: 'company', company: COMPANY }, command: 'run test.yaml' };

describe('RunScope: what a command holds, opened in order and let go in reverse', () => {
  it('holds the run lock until it closes: a second scope for the same company is refused (exit 4), then let in', async () => {
    const stateDir = tempDir();
    const first = await RunScope.open(globalsIn(stateDir), lock);
    await expect(RunScope.open(globalsIn(stateDir), lock)).rejects.toBeInstanceOf(LockedError);
    await first.close();
    const second = await RunScope.open(globalsIn(stateDir), lock);
    await second.close();
  });

  it('makes one runtime, and removes its Ctrl-C handlers when it closes', async () => {
    const globals = globalsIn(tempDir());
    const scope = await RunScope.open(globals);
    const runtime = scope.runtime({ company: COMPANY });
    expect(scope.runtime()).toBe(runtime);
    scope.onInterrupt(() => undefined);
    expect(handlers(globals)).toBe(1);
    await scope.close();
    expect(handlers(globals)).toBe(0);
  });

  it('lets go of everything even when closing one part fails, and then says so', async () => {
    const stateDir = tempDir();
    const globals = globalsIn(stateDir);
    const closing = RunScope.with(globals, lock, (scope) => {
      vi.spyOn(scope.runtime({ company: COMPANY }), 'close').mockRejectedValue(new Error('the client would not close'));
      scope.onInterrupt(() => undefined);
      return Promise.resolve('done');
    });
    await expect(closing).rejects.toThrow('the client would not close');
    // The lock, opened before the runtime, was released after it failed; the handlers went too.
    expect(handlers(globals)).toBe(0);
    await (await RunScope.open(globalsIn(stateDir), lock)).close();
  });
});
