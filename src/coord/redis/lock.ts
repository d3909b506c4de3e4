import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationError } from '../../errors.js';
import { LockedError } from '../../errors.js';
import { describeHeld } from '../file-lock.js';
import type { HeldLock, LockHolder, LockOptions, LockScope } from '../types.js';
import { RedisLink, Script } from './link.js';
import { LOCK_RELEASE, LOCK_RENEW, LOCK_TAKE } from './scripts.js';

const TAKE = new Script(LOCK_TAKE);
const RENEW = new Script(LOCK_RENEW);
const RELEASE = new Script(LOCK_RELEASE);

/** All of a company's keys share the `{company}` hash tag (one cluster slot). */
export function companyKey(company: string, ...rest: string[]): string {
  return ['sitefleet', `{${company}}`, ...rest].join(':');
}

export function lockKey(scope: LockScope): string {
  return scope.kind === 'playbook' ? companyKey(scope.company, 'lock', 'playbook', scope.playbook ?? '') : companyKey(scope.company, 'lock', 'company');
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    return JSON.parse(text) as LockHolder;
  } catch {
    return undefined;
  }
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10}s`;

/**
 * The run lock as a Redis key with a lease: taken atomically (only when absent), renewed a third of a
 * lease at a time while the run lives, released only by its owner (compare-and-delete). A holder that
 * died stops renewing, and its key expires after at most one lease; the next run takes it and says it
 * took over, from the last holder kept beside the lock. A renewal that finds the lock gone or someone
 * else's (this process stalled past its lease) stops the run: two runs must not both believe they hold it.
 */
export async function takeRedisLock(link: RedisLink, scope: LockScope, options: LockOptions): Promise<HeldLock> {
  const key = lockKey(scope);
  const last = `${key}:last`;
  const index = companyKey(scope.company, 'lock', 'playbooks');
  const companyLock = lockKey({ company: scope.company, kind: 'company' });
  const leaseMs = link.address.leaseMs;
  const me: LockHolder & { token: string } = {
    pid: process.pid,
    host: hostname(),
    started_at: new Date().toISOString(),
    command: options.command,
    playbook: scope.playbook,
    token: randomUUID(),
  };
  const value = JSON.stringify(me);
  const where = `${key} on ${link.address.describe}`;
  let waitingSaid = false;
  for (;;) {
    const [taken, other] = (await link.run(TAKE, [key, last, companyLock, index], [value, leaseMs, scope.kind])) as [number, string];
    if (taken === 1) {
      const previous = other ? parseHolder(other) : undefined;
      if (previous)
        options.onNote?.(
          `took over the lock from pid ${previous.pid} on ${previous.host} (started ${previous.started_at}, ${previous.command}): it stopped renewing its ${seconds(leaseMs)} lease`,
        );
      return hold(link, { key, last, index }, value, where);
    }
    const holder = parseHolder(other);
    if (!options.wait)
      throw new LockedError(
        where,
        holder,
        describeHeld(holder, scope),
        `if that run is gone, its lock lets go by itself within ${seconds(leaseMs)} (its lease)`,
      );
    if (!waitingSaid) options.onNote?.(`waiting for the lock held by pid ${holder?.pid} on ${holder?.host} (started ${holder?.started_at})`);
    waitingSaid = true;
    // Often enough that a lease running out is seen within a fraction of it.
    await sleep(Math.min(500, leaseMs / 10), undefined, { signal: options.signal });
  }
}

function hold(link: RedisLink, { key, last, index }: { key: string; last: string; index: string }, value: string, where: string): HeldLock {
  const leaseMs = link.address.leaseMs;
  const renew = async () => {
    const still = await link.run(RENEW, [key, index], [value, leaseMs]).catch(() => undefined);
    if (still === 0) link.fail(new CoordinationError(`the lock ${where} was lost: this run could not renew it in time and another may have taken it`));
  };
  const timer = setInterval(() => void renew(), leaseMs / 3);
  timer.unref();
  return {
    where,
    async release() {
      clearInterval(timer);
      if (!link.lost.aborted) await link.run(RELEASE, [key, last, index], [value]).catch(() => undefined);
    },
  };
}
