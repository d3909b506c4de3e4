import { openCoordination } from '../coord/open.js';
import type { Coordination, LockScope } from '../coord/types.js';
import { watcherFor, type Watcher } from '../run/watcher.js';
import { forTerminal } from '../util/safe-text.js';
import { createRuntime, type GlobalOptions, type Runtime, type RuntimeOptions } from './runtime.js';
import { onInterrupt } from './signals.js';

/** A read-only command's scope (no lock), with its runtime drawing from `company`'s shared budget. */
export function withRuntime<T>(globals: GlobalOptions, company: string | undefined, work: (runtime: Runtime) => Promise<T>): Promise<T> {
  return RunScope.with(globals, undefined, (scope) => work(scope.runtime({ company })));
}

/** The run lock a command that writes takes: whose (scope), for what (`run FILE`), and whether it waits for it. */
export interface LockRequest {
  scope: LockScope;
  command: string;
  wait?: boolean;
}

/**
 * What a command holds while it talks to the service, opened in this order and let go in reverse
 * however its work ends: the coordination (this machine, or Redis with --coordination), the run lock
 * (the commands that write; a dry run and the read-only commands take none), the runtime (client,
 * budgets, caller), the watcher of its operations and Ctrl-C's handlers. A command opens one scope;
 * nothing it calls opens or closes any of these.
 */
export class RunScope {
  readonly #closers: (() => unknown)[] = [];
  #runtime: Runtime | undefined;

  private constructor(
    readonly globals: GlobalOptions,
    readonly coordination: Coordination,
  ) {}

  /** Opens a scope, runs `work` in it and closes it. */
  static async with<T>(globals: GlobalOptions, lock: LockRequest | undefined, work: (scope: RunScope) => Promise<T>): Promise<T> {
    const scope = await RunScope.open(globals, lock);
    try {
      return await work(scope);
    } finally {
      await scope.close();
    }
  }

  /** The coordination, then the lock (exit 4 when another run holds it, or waiting for it with `wait`). */
  static async open(globals: GlobalOptions, lock?: LockRequest): Promise<RunScope> {
    const coordination = await openCoordination(globals);
    const scope = new RunScope(globals, coordination);
    scope.#closers.push(() => coordination.close());
    try {
      if (lock) await scope.#lock(lock);
      return scope;
    } catch (error) {
      await scope.close();
      throw error;
    }
  }

  /** The runtime, made on first use under the playbook's settings and drawing from `company`'s shared budget. */
  runtime(options: Omit<RuntimeOptions, 'coordination'> = {}): Runtime {
    if (!this.#runtime) {
      const runtime = createRuntime(this.globals, { ...options, coordination: this.coordination });
      this.#closers.push(() => runtime.close());
      this.#runtime = runtime;
    }
    return this.#runtime;
  }

  /** A watcher of the operations the runtime's calls start, polling through its caller until `signal`. */
  watcher(signal: AbortSignal): Watcher {
    const { caller, tracking } = this.runtime();
    return watcherFor(caller, tracking, signal);
  }

  /**
   * Ctrl-C and SIGTERM: the first calls `first`, a second calls `second` and exits 130 at once.
   * Removed when the scope closes, or earlier by the function returned.
   */
  onInterrupt(first: (signal: NodeJS.Signals) => void, second?: () => void): () => void {
    const off = onInterrupt(this.globals.io, first, second);
    this.#closers.push(off);
    return off;
  }

  /** Lets go of everything, the last opened first; each is let go even when one before it fails. */
  async close(): Promise<void> {
    let failed: Error | undefined;
    for (const close of this.#closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        failed ??= error instanceof Error ? error : new Error('closing failed', { cause: error });
      }
    }
    if (failed) throw failed;
  }

  async #lock({ scope, command, wait }: LockRequest): Promise<void> {
    const { globals } = this;
    if (scope.kind === 'playbook' && !globals.coordination)
      globals.io.stderr.write(
        `sitefleet: warning: lock: playbook without --coordination: runs of other playbooks for this company may go at the same time, and each learns the rate limit from 429s on its own\n`,
      );
    const held = await this.coordination.lock(scope, { command, wait, onNote: (text) => globals.io.stderr.write(`sitefleet: ${forTerminal(text)}\n`) });
    this.#closers.push(() => held.release());
  }
}
