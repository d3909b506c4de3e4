import { closeSync, constants, fstatSync, openSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { writeOutput, type OutputFile } from '../util/output-file.js';
import { mergeMetrics } from './metrics.js';
import type { RunEnd } from './run-end.js';

/** How long a run waits for another playbook's run to finish writing the same file; a lock older than STALE_MS was left by a crash. */
const LOCK_WAIT_MS = 10_000;
const STALE_MS = 60_000;

/**
 * Replaces this playbook's series in the metrics file (see mergeMetrics), atomically: node_exporter
 * never reads half a file. Two playbooks that end together take turns under a lock file beside it,
 * so neither writes over the other's series with what it read before the other wrote.
 */
export async function writeMetrics(output: OutputFile, end: RunEnd): Promise<void> {
  const lock = `${output.path}.lock`;
  await takeLock(lock);
  try {
    writeOutput(output, mergeMetrics(readNoFollow(output.path), end));
  } finally {
    unlinkSync(lock);
  }
}

async function takeLock(lock: string): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (Date.now() - mtimeOf(lock) > STALE_MS) unlinkLockLeftBehind(lock);
    else if (Date.now() > deadline) throw new Error(`another run has held ${lock} for ${LOCK_WAIT_MS / 1000}s`);
    else await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

function unlinkLockLeftBehind(lock: string): void {
  try {
    unlinkSync(lock);
  } catch {
    // another run took it away first
  }
}

/** The file's text, read without following a link (the check at the start refused one; this holds if one appeared since). */
function readNoFollow(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
  try {
    if (!fstatSync(fd).isFile()) throw new Error('is not a regular file');
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
