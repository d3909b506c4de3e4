import { existsSync, readFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Plan } from '../plan/plan.js';
import type { StepResult, StopKind } from './types.js';

/** One line of the journal. `t` is the record type; every record after `start` names its step; `at` is epoch ms. */
export type JournalRecord =
  | { t: 'start'; v: 1; run_id: string; playbook: string; report: string; started_at: string; plan: Plan }
  | { t: 'resume'; at: number }
  /** Written, and made durable, before an attempt is sent. */
  | { t: 'intent'; step: string; attempt: number; at: number }
  /** The answer to a step's call (written as soon as it is in). */
  | { t: 'result'; step: string; result: StepResult; at: number }
  /** A later word on a step: its operation ended, verify, `sitefleet status`. */
  | { t: 'update'; step: string; result: StepResult; at: number }
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
  #failed: unknown;

  private constructor(
    private readonly handle: FileHandle,
    readonly path: string,
    private readonly fsync: boolean,
  ) {}

  /** Opens for appending; `exclusive` refuses a file that already exists (a new run). */
  static async open(path: string, options: { exclusive: boolean; fsync?: boolean }): Promise<Journal> {
    const handle = await open(path, options.exclusive ? 'wx' : 'a', 0o600);
    return new Journal(handle, path, options.fsync ?? true);
  }

  append(record: JournalRecord): Promise<void> {
    // Login links are secrets: a step's output never reaches the journal.
    const safe = 'result' in record && record.result.output !== undefined ? { ...record, result: { ...record.result, output: undefined } } : record;
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
        this.#failed = error;
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
  return foldJournal(records, path);
}

export function foldJournal(records: JournalRecord[], path = 'journal'): JournalState {
  const first = records[0];
  if (!first || first.t !== 'start') throw new Error(`${path} does not begin with a start record`);
  const state: JournalState = { start: first, results: new Map(), intents: new Map(), ended: false, resumes: 0 };
  for (const r of records.slice(1)) {
    switch (r.t) {
      case 'intent':
        state.intents.set(r.step, Math.max(state.intents.get(r.step) ?? 0, r.attempt));
        break;
      case 'result':
      case 'update':
        state.results.set(r.step, r.result);
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
  return state;
}
