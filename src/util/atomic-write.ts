import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Files that must never be seen half-written, or lost to a power cut: written under a fresh temporary
 * name (created exclusively, so never through a symlink someone left there), fsync'd, then renamed
 * over the target (a rename replaces a symlink at the target, it does not write through it), and the
 * folder synced so the new name is durable too.
 */
export function writeFileAtomic(path: string, text: string | Uint8Array, mode = 0o644): void {
  const tmp = tempName(path);
  writeNewFile(tmp, text, mode);
  renameSync(tmp, path);
  syncFolder(dirname(path));
}

/** Creates `path` (exclusively: never through a link left there), writes `text` whole and fsyncs it; on a failure nothing is left. */
export function writeNewFile(path: string, text: string | Uint8Array, mode: number): void {
  const fd = openSync(path, 'wx', mode);
  try {
    const data = typeof text === 'string' ? Buffer.from(text) : text;
    for (let written = 0; written < data.length;) written += writeSync(fd, data, written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(path);
    throw error;
  }
  closeSync(fd);
}

/** The same, without holding the event loop (report snapshots during a run). */
export async function writeFileAtomicAsync(path: string, text: string, mode = 0o644): Promise<void> {
  const tmp = tempName(path);
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(tmp);
    throw error;
  }
  await handle.close();
  await rename(tmp, path);
  syncFolder(dirname(path));
}

function tempName(path: string): string {
  return `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

/** Makes a new name in a folder durable; some file systems refuse, and the file's own fsync still holds. */
export function syncFolder(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // not supported here
  }
}
