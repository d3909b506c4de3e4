import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { LockedError, UsageError } from '../errors.js';
import { isUuid } from '../util/uuid.js';
import type { HeldLock, LockHolder, LockOptions, LockScope } from './types.js';

export type { LockHolder } from './types.js';

/** What a held lock is called in messages: `this company`, or `playbook "nightly" of this company`. */
export function describeHeld(holder: LockHolder | undefined, scope: LockScope): string {
  const playbook = holder ? holder.playbook : scope.playbook;
  return playbook !== undefined ? `playbook "${playbook}" of this company` : 'this company';
}

/** The lock file's name: the company, and for playbook scope the name made safe for a file name (and kept apart by a hash). */
export function lockFileName(scope: LockScope): string {
  // The company may come from a file read back (a journal, a report): only a UUID names a file here.
  if (!isUuid(scope.company)) throw new UsageError(`${JSON.stringify(scope.company)} is not a company UUID: no lock file is named after it`);
  if (scope.kind === 'company') return `${scope.company}.lock`;
  const name = scope.playbook ?? '';
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64);
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${scope.company}.playbook.${safe}.${hash}.lock`;
}

/** `--state-dir`, else SITEFLEET_STATE_DIR, else the user's cache directory. */
export function defaultStateDir(env: Record<string, string | undefined>): string {
  if (env.SITEFLEET_STATE_DIR) return env.SITEFLEET_STATE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'sitefleet');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(path: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}

/** Creates the lock whole (written under a temporary name, then linked: never seen half-written); false if it exists. */
function tryCreate(path: string, me: LockHolder): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o600 });
  try {
    linkSync(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(tmp);
  }
}

const same = (a: LockHolder, b: LockHolder) => a.pid === b.pid && a.host === b.host && a.started_at === b.started_at;
/** A takeover takes milliseconds; a guard this old was left by a run that died in the middle of one. */
const GUARD_STALE_MS = 30_000;

/**
 * Replaces a stale lock, with one winner however many runs race for it. Only the run that creates
 * the `.takeover` guard (exclusively) may touch the lock; it checks that the lock still holds the very
 * holder it found stale before removing it, then creates its own. Every other racer comes back to find
 * a live holder (exit 4), or the lock free.
 */
function takeOver(path: string, stale: LockHolder, me: LockHolder): boolean {
  const guard = `${path}.takeover`;
  try {
    writeFileSync(guard, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    try {
      if (Date.now() - statSync(guard).mtimeMs > GUARD_STALE_MS) unlinkSync(guard);
    } catch {
      // gone meanwhile: the other taker finished
    }
    return false;
  }
  try {
    const now = readHolder(path);
    if (!now || !same(now, stale)) return false;
    unlinkSync(path);
    return tryCreate(path, me);
  } finally {
    unlinkSync(guard);
  }
}

/**
 * The two scopes exclude each other: a company-wide run has the company to itself, so it waits for
 * every playbook-scoped run of the company, and they for it. Found after taking one's own lock (each
 * side looks at the other's after creating its own), so two racing runs can both back off, never
 * both go. A lock whose process is gone on this host does not count.
 */
function otherScopeHolder(dir: string, scope: LockScope): { path: string; holder: LockHolder } | undefined {
  const paths =
    scope.kind === 'playbook'
      ? [join(dir, lockFileName({ company: scope.company, kind: 'company' }))]
      : readdirSync(dir)
          .filter((f) => f.startsWith(`${scope.company}.playbook.`) && f.endsWith('.lock'))
          .map((f) => join(dir, f));
  for (const path of paths) {
    const holder = readHolder(path);
    if (holder && (holder.host !== hostname() || alive(holder.pid))) return { path, holder };
  }
  return undefined;
}

/**
 * One run per lock scope at a time (on this machine): a lock file holding pid, host and start time,
 * created exclusively. A lock left by a process that is gone (same host, pid not running) is taken
 * over, and `onNote` says so. With `wait`, polls until the holder lets go.
 */
export async function acquireLock(stateDir: string, scope: LockScope, options: LockOptions): Promise<HeldLock> {
  const dir = join(stateDir, 'locks');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, lockFileName(scope));
  const me: LockHolder = { pid: process.pid, host: hostname(), started_at: new Date().toISOString(), command: options.command, playbook: scope.playbook };
  let waitingSaid = false;
  for (;;) {
    let held = tryCreate(path, me);
    let holder = held ? undefined : readHolder(path);
    let where = path;
    if (!held && holder && holder.host === me.host && !alive(holder.pid)) {
      held = takeOver(path, holder, me);
      if (held) options.onNote?.(`took over a stale lock: pid ${holder.pid} (started ${holder.started_at}) is no longer running`);
      else {
        await sleep(50, undefined, { signal: options.signal }); // another run is taking it over: see who won
        continue;
      }
    }
    const other = held ? otherScopeHolder(dir, scope) : undefined;
    if (other) {
      unlinkSync(path); // ours, just created: the other scope's run goes first
      held = false;
      ({ holder, path: where } = other);
    }
    if (held) {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const current = readHolder(path);
        if (current && same(current, me)) unlinkSync(path);
        process.off('exit', release);
      };
      // A run that ends by process.exit (a second Ctrl-C) still lets go.
      process.on('exit', release);
      return { where: path, release: () => Promise.resolve(release()) };
    }
    if (!options.wait) throw new LockedError(where, holder, describeHeld(holder, scope), `remove ${where} if that run is gone`);
    if (!waitingSaid) options.onNote?.(`waiting for the lock held by pid ${holder?.pid} on ${holder?.host} (started ${holder?.started_at})`);
    waitingSaid = true;
    await sleep(1000, undefined, { signal: options.signal });
  }
}

/**
 * A short lock of this machine's state folder for one job (compacting a store): the same lock file as
 * a run's (created whole and exclusively, a stale one of a process gone on this host taken over by
 * one winner), but never waited for. Returns how to let go, or undefined when another process holds it.
 */
export function tryLockFile(path: string, command: string): (() => void) | undefined {
  const me: LockHolder = { pid: process.pid, host: hostname(), started_at: new Date().toISOString(), command };
  let held = tryCreate(path, me);
  if (!held) {
    const holder = readHolder(path);
    if (holder && holder.host === me.host && !alive(holder.pid)) held = takeOver(path, holder, me);
  }
  if (!held) return undefined;
  return () => {
    const current = readHolder(path);
    if (current && same(current, me)) unlinkSync(path);
  };
}

/** The lock a playbook's run takes: `settings.lock` (default `company`). */
export function lockScopeOf(plan: { company: string; name: string; settings?: { lock?: 'company' | 'playbook' } }): LockScope {
  // A UUID in either case is one company: one lock.
  const company = plan.company.toLowerCase();
  return plan.settings?.lock === 'playbook' ? { company, kind: 'playbook', playbook: plan.name } : { company, kind: 'company' };
}
