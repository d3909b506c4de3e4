import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
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

/**
 * One run per company at a time: a lock file holding pid, host and start time, created exclusively.
 * A lock left by a process that is gone (same host, pid not running) is taken over, and `onNote` says
 * so. With `wait`, polls until the holder lets go.
 */
export async function acquireLock(stateDir: string, company: string, options: { command: string; wait?: boolean; onNote?: (text: string) => void; signal?: AbortSignal }): Promise<RunLock> {
  const dir = join(stateDir, 'locks');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${company}.lock`);
  const me: LockHolder = { pid: process.pid, host: hostname(), started_at: new Date().toISOString(), command: options.command };
  let waitingSaid = false;
  for (;;) {
    try {
      writeFileSync(path, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o600 });
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        if (readHolder(path)?.pid === me.pid) unlinkSync(path);
        process.off('exit', release);
      };
      // A run that ends by process.exit (a second Ctrl-C) still lets go.
      process.on('exit', release);
      return { path, release };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(path);
    if (holder && holder.host === me.host && !alive(holder.pid)) {
      options.onNote?.(`taking over a stale lock: pid ${holder.pid} (started ${holder.started_at}) is no longer running`);
      try {
        unlinkSync(path);
      } catch {
        // someone else took it over first; try again
      }
      continue;
    }
    if (!options.wait) throw new LockedError(path, holder);
    if (!waitingSaid) options.onNote?.(`waiting for the lock held by pid ${holder?.pid} on ${holder?.host} (started ${holder?.started_at})`);
    waitingSaid = true;
    await sleep(1000, undefined, { signal: options.signal });
  }
}
