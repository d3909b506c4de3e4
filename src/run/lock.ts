import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SitefleetError } from '../errors.js';

export interface LockHolder {
  pid: number;
  host: string;
  started_at: string;
  command: string;
}

/** Another run holds the company's lock. Exit code 4. */
export class LockedError extends SitefleetError {
  override name = 'LockedError';
  constructor(
    readonly path: string,
    readonly holder: LockHolder | undefined,
  ) {
    super(
      holder
        ? `another sitefleet run holds the lock for this company: pid ${holder.pid} on ${holder.host}, started ${holder.started_at} (${holder.command}). Wait for it, pass --wait-lock, or remove ${path} if that run is gone.`
        : `the lock ${path} exists but cannot be read; remove it if no run is going`,
    );
  }
}

/** `--state-dir`, else SITEFLEET_STATE_DIR, else the user's cache directory. */
export function defaultStateDir(env = process.env): string {
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

export interface RunLock {
  path: string;
  release(): void;
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
 * One run per company at a time: a lock file holding pid, host and start time, created exclusively.
 * A lock left by a process that is gone (same host, pid not running) is taken over, and `onNote` says
 * so. With `wait`, polls until the holder lets go.
 */
export async function acquireLock(
  stateDir: string,
  company: string,
  options: { command: string; wait?: boolean; onNote?: (text: string) => void; signal?: AbortSignal },
): Promise<RunLock> {
  const dir = join(stateDir, 'locks');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${company}.lock`);
  const me: LockHolder = { pid: process.pid, host: hostname(), started_at: new Date().toISOString(), command: options.command };
  let waitingSaid = false;
  for (;;) {
    let held = tryCreate(path, me);
    const holder = held ? undefined : readHolder(path);
    if (holder && holder.host === me.host && !alive(holder.pid)) {
      held = takeOver(path, holder, me);
      if (held) options.onNote?.(`took over a stale lock: pid ${holder.pid} (started ${holder.started_at}) is no longer running`);
      else {
        await sleep(50, undefined, { signal: options.signal }); // another run is taking it over: see who won
        continue;
      }
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
      return { path, release };
    }
    if (!options.wait) throw new LockedError(path, holder);
    if (!waitingSaid) options.onNote?.(`waiting for the lock held by pid ${holder?.pid} on ${holder?.host} (started ${holder?.started_at})`);
    waitingSaid = true;
    await sleep(1000, undefined, { signal: options.signal });
  }
}
