import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BusyClaim, BusyRegister } from '../types.js';
import { companyKey } from './lock.js';
import { RedisLink, Script } from './link.js';
import { BUSY_CLAIM, BUSY_CLEAR, BUSY_REPLACE } from './scripts.js';

const CLAIM = new Script(BUSY_CLAIM);
const REPLACE = new Script(BUSY_REPLACE);
const CLEAR = new Script(BUSY_CLEAR);

/** How often to look again at an environment another run is sending to (no operation id yet). */
const SENDING_RECHECK_MS = 250;

interface Mark {
  run: string;
  host: string;
  pid: number;
  /** The operation in progress, once the call was accepted; null while sending. */
  op: string | null;
}

/**
 * Environments busy with an operation, shared by every run of the company: one key per environment,
 * holding the run that writes to it and, once accepted, its operation id.
 *
 * A run claims the environment before each write (atomically: free, or already its own). While another
 * run is sending, it looks again shortly; once that run's operation is known, it follows the operation
 * itself (`waitFor`: the same watcher and rules as its own operations), clears the mark when the
 * operation ended, and claims again. A claim while sending is a lease renewed by this process, so a
 * run that dies mid-send frees the environment within one lease.
 */
export class RedisBusy implements BusyRegister {
  /** Claims of this run still sending: renewed until accepted or given up. */
  readonly #sending = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly link: RedisLink,
    private readonly company: string,
    private readonly runId: string,
  ) {}

  async claim(env: string, signal: AbortSignal, waitFor: (operationId: string) => Promise<void>): Promise<BusyClaim> {
    const key = companyKey(this.company, 'busy', env);
    const mine = JSON.stringify({ run: this.runId, host: hostname(), pid: process.pid, op: null } satisfies Mark);
    for (;;) {
      if (signal.aborted) throw signal.reason as Error;
      const holder = (await this.link.run(CLAIM, [key], [mine, this.runId, this.link.address.leaseMs])) as string;
      if (holder === '') break;
      const mark = parseMark(holder);
      if (mark?.op) {
        await waitFor(mark.op);
        // Stopped while following it: the operation may still be going; its mark stays.
        if (signal.aborted) throw signal.reason as Error;
        await this.link.run(CLEAR, [key], [holder]);
      } else {
        await sleep(SENDING_RECHECK_MS, undefined, { signal }).catch(() => undefined);
      }
    }
    this.#renewWhileSending(key, mine);
    let current = mine;
    return {
      // A run that does not follow its operation (a task without wait) leaves the mark when it ends:
      // others then follow the operation themselves, until the task's wait timeout has passed.
      started: (operationId, forMs) => {
        const next = JSON.stringify({ ...(JSON.parse(mine) as Mark), op: operationId } satisfies Mark);
        this.#sending.delete(key);
        const expected = current;
        current = next;
        void this.link.run(REPLACE, [key], [expected, next, Math.max(1000, Math.round(forMs))]).catch(() => undefined);
      },
      ended: () => {
        this.#sending.delete(key);
        void this.link.run(CLEAR, [key], [current]).catch(() => undefined);
      },
    };
  }

  #renewWhileSending(key: string, value: string): void {
    this.#sending.set(key, value);
    if (this.#timer) return;
    const leaseMs = this.link.address.leaseMs;
    this.#timer = setInterval(() => {
      if (this.#sending.size === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
        return;
      }
      for (const [k, v] of this.#sending) void this.link.run(REPLACE, [k], [v, v, leaseMs]).catch(() => undefined);
    }, leaseMs / 3);
    this.#timer.unref();
  }
}

function parseMark(text: string): Mark | undefined {
  try {
    return JSON.parse(text) as Mark;
  } catch {
    return undefined;
  }
}
