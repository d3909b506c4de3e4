import { randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { link, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Plan } from '../plan/plan.js';
import { SitefleetError, UsageError } from '../errors.js';
import { syncFolder } from '../util/atomic-write.js';
import type { BackupSlots, StepResult, StopKind } from './types.js';
import { mergeSlots } from './slot-record.js';

/** One line of the journal. `t` is the record type; every record after `start` names its step; `at` is epoch ms. */
export type JournalRecord =
  /** `coordination`: the Redis the run shared its lock and budget through (no password), so that resume and status can say if it is missing. */
  | {
      t: 'start';
      v: 1;
      run_id: string;
      playbook: string;
      report: string;
      started_at: string;
      plan: Plan;
      coordination?: string;
      /** `run --plan FILE`: the saved plan this run applies. */
      plan_file?: string;
      /** The API token's seal over the rest of the record (util/seal.ts): resume acts only on a start record of its own token. */
      seal?: string;
    }
  | { t: 'resume'; at: number }
  /** Written, and made durable, before an attempt is sent. */
  | { t: 'intent'; step: string; attempt: number; at: number }
  /** The answer to a step's call (written as soon as it is in). */
  | { t: 'result'; step: string; result: StepResult; at: number }
  /** A later word on a step: its operation ended, verify, `sitefleet status`. */
  | { t: 'update'; step: string; result: StepResult; at: number }
  /**
   * A restore point's room, once made and before its backup is asked for: the backups removed to make
   * it (and those its tag carried before). Its step's records carry it too; this one stands for them
   * until the first is written (a kill before then), and through a resume that sends the step again.
   */
  | { t: 'room'; step: string; slots: BackupSlots; at: number }
  | { t: 'stopped'; kind: StopKind; reason: string; at: number }
  | { t: 'end'; at: number };

/** `report.json` → `report.journal.jsonl`, beside it. */
export function journalPathFor(reportPath: string): string {
  return `${reportPath.replace(/\.json$/, '')}.journal.jsonl`;
}

/**
 * An append-only JSON-lines file. `append` resolves once the record is on disk (fsync'd). Records
 * appended while a sync is under way are written and synced together with the next one (group
 * commit), so a run with many calls in flight pays for far fewer syncs than records.
 */
export class Journal {
  #buffer: string[] = [];
  #waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  #flushing: Promise<void> | undefined;
  #failed: Error | undefined;

  private constructor(
    private readonly handle: FileHandle,
    readonly path: string,
    private readonly fsync: boolean,
  ) {}

  /**
   * Brings a new run's journal into being whole: the start record is written and fsync'd under a
   * temporary name, then linked to the final name (which fails if that name exists: one run, one
   * journal). A crash at any instant leaves either no journal or one with a complete start record.
   * A journal at that name without a complete start record belonged to a run that sent nothing: it is
   * replaced (`replaced` says so).
   */
  static async create(
    path: string,
    start: Extract<JournalRecord, { t: 'start' }>,
    options: { fsync?: boolean } = {},
  ): Promise<{ journal: Journal; replaced: boolean }> {
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.write(`${JSON.stringify(start)}\n`);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    let replaced = false;
    try {
      await link(tmp, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !isTornJournal(path)) {
        await unlink(tmp).catch(() => undefined);
        throw error;
      }
      await rename(tmp, path); // an empty or torn journal: its run sent nothing
      replaced = true;
    }
    await unlink(tmp).catch(() => undefined);
    syncFolder(dirname(path));
    return { journal: await Journal.open(path, options), replaced };
  }

  /**
   * Opens an existing journal for appending. A torn last record (the process was killed mid-write)
   * is cut off first: appending after it would leave a broken line in the middle of the file.
   */
  static async open(path: string, options: { fsync?: boolean } = {}): Promise<Journal> {
    // Never through a link: a journal linked to another file would truncate and append to it.
    const handle = await open(path, constants.O_RDWR | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ELOOP' ? new UsageError(`${path} is a link: a journal is never written through one`) : error;
    });
    if (!(await handle.stat()).isFile()) {
      await handle.close();
      throw new SitefleetError(`${path} is not a regular file: not a journal`);
    }
    const { size } = await handle.stat();
    const end = await lastNewlineEnd(handle, size);
    if (end < size) {
      await handle.truncate(end);
      await handle.datasync();
    }
    await handle.close();
    return new Journal(await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW, 0o600), path, options.fsync ?? true);
  }

  append(record: JournalRecord): Promise<void> {
    // Login links are secrets: a step's output never reaches the journal.
    const safe =
      'result' in record && record.result.private_output !== undefined ? { ...record, result: { ...record.result, private_output: undefined } } : record;
    this.#buffer.push(`${JSON.stringify(safe)}\n`);
    return new Promise((resolve, reject) => {
      if (this.#failed) return reject(this.#failed);
      this.#waiters.push({ resolve, reject });
      this.#flushing ??= this.#flush();
    });
  }

  async #flush(): Promise<void> {
    while (this.#buffer.length > 0) {
      const data = this.#buffer.join('');
      const waiters = this.#waiters;
      this.#buffer = [];
      this.#waiters = [];
      try {
        await this.handle.write(data);
        if (this.fsync) await this.handle.datasync();
        for (const w of waiters) w.resolve();
      } catch (error) {
        this.#failed = error instanceof Error ? error : new Error(String(error));
        for (const w of [...waiters, ...this.#waiters]) w.reject(error);
        this.#waiters = [];
        this.#buffer = [];
      }
    }
    this.#flushing = undefined;
  }

  async close(): Promise<void> {
    await this.#flushing;
    await this.handle.close();
  }
}

export interface JournalState {
  start: Extract<JournalRecord, { t: 'start' }>;
  /** The latest result of each step (answers, then updates). */
  results: Map<string, StepResult>;
  /** Steps with an intent recorded, and how many attempts. */
  intents: Map<string, number>;
  stopped?: { kind: StopKind; reason: string };
  ended: boolean;
  resumes: number;
  /**
   * The results that told of a site put back (a restore, isolation's culprits), each with the time
   * its record was written, in order: when a version broke a site (run/write-ends.ts `journalBreaks`),
   * a time no later reader re-stamps.
   */
  putBack: Map<string, { at: number; result: StepResult }[]>;
  /** Each restore point's room as its `room` records said (merged onto its result, when it has one, as the journal is read). */
  room: Map<string, BackupSlots>;
}

/** The offset just past the last newline of the file (0 if none): where its last complete record ends. */
async function lastNewlineEnd(handle: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(Math.min(Math.max(size, 1), 64 * 1024));
  for (let at = size; at > 0;) {
    const from = Math.max(0, at - chunk.length);
    const { bytesRead } = await handle.read(chunk, 0, at - from, from);
    const i = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (i >= 0) return from + i + 1;
    at = from;
  }
  return 0;
}

/** A journal whose run never got a complete start record on disk: that run sent nothing. */
export class NoStartRecordError extends SitefleetError {
  override name = 'NoStartRecordError';
}

/** An empty file, or the start of a start record that was never finished: what a killed run leaves, and nothing else. */
function isTornJournal(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(12);
    const n = readSync(fd, head, 0, head.length, 0);
    return (n === 0 || '{"t":"start"'.startsWith(head.subarray(0, n).toString('utf8'))) && !hasStartRecord(path);
  } finally {
    closeSync(fd);
  }
}

/** Whether the file begins with a complete (newline-ended) start record. */
export function hasStartRecord(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(64 * 1024);
    let text = '';
    for (let at = 0; ;) {
      const n = readSync(fd, chunk, 0, chunk.length, at);
      if (n === 0) return false;
      const newline = chunk.subarray(0, n).indexOf(0x0a);
      if (newline >= 0) {
        text += chunk.subarray(0, newline).toString('utf8');
        try {
          return (JSON.parse(text) as { t?: unknown }).t === 'start';
        } catch {
          return false;
        }
      }
      text += chunk.subarray(0, n).toString('utf8');
      at += n;
    }
  } finally {
    closeSync(fd);
  }
}

/** Reads a journal; a torn last line (the process was killed mid-write) is ignored. */
export function readJournal(path: string): JournalState {
  if (!existsSync(path)) throw new Error(`no journal at ${path}`);
  const lines = readFileSync(path, 'utf8').split('\n');
  const records: JournalRecord[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line) as JournalRecord);
    } catch {
      if (i >= lines.length - 2) break; // the last line, cut short by a kill
      throw new Error(`${path}:${i + 1}: not a journal record`);
    }
  }
  if (records[0]?.t !== 'start') throw new NoStartRecordError(`${path} has no complete start record: its run was stopped before it sent anything`);
  return foldJournal(records, path);
}

export function foldJournal(records: JournalRecord[], path = 'journal'): JournalState {
  const first = records[0];
  if (!first || first.t !== 'start') throw new Error(`${path} does not begin with a start record`);
  const state: JournalState = { start: first, results: new Map(), intents: new Map(), ended: false, resumes: 0, putBack: new Map(), room: new Map() };
  for (const r of records.slice(1)) {
    switch (r.t) {
      case 'intent':
        state.intents.set(r.step, Math.max(state.intents.get(r.step) ?? 0, r.attempt));
        break;
      case 'result':
      case 'update':
        state.results.set(r.step, r.result);
        if (r.result.restored || r.result.undone?.status === 'succeeded' || r.result.isolation?.culprits.length) {
          const seen = state.putBack.get(r.step);
          if (seen) seen.push({ at: r.at, result: r.result });
          else state.putBack.set(r.step, [{ at: r.at, result: r.result }]);
        }
        break;
      case 'room':
        state.room.set(r.step, mergeSlots(state.room.get(r.step), r.slots));
        break;
      case 'stopped':
        state.stopped = { kind: r.kind, reason: r.reason };
        break;
      case 'resume':
        state.resumes++;
        state.stopped = undefined;
        state.ended = false;
        break;
      case 'end':
        state.ended = true;
        break;
      case 'start':
        throw new Error(`${path}: a second start record`);
    }
  }
  // A record written before its room's record was read in (or a kill between the two): the room goes on it.
  for (const [step, slots] of state.room) {
    const result = state.results.get(step);
    if (result) state.results.set(step, { ...result, backup_slots: mergeSlots(result.backup_slots, slots) });
  }
  return state;
}
