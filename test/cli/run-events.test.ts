import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { journalRecorder } from '../../src/app/run-events/journal-recorder.js';
import { ReportSnapshots } from '../../src/app/run-events/report-snapshots.js';
import { fanOut } from '../../src/app/run-events/subscriber.js';
import type { Journal } from '../../src/run/journal.js';
import type { StepResult } from '../../src/run/types.js';
import { tempDir } from '../helpers/cli.js';
import { silent } from '../helpers/run.js';
import { waitFor } from '../helpers/sim.js';

const step = {
  id: '0:e1',
  task: 't',
  task_index: 0,
  action: 'php.set_version',
  target: { env_id: 'e1' },
  endpoint: 'modifyPhpVersion',
  method: 'PUT',
  path: '/x',
  params: {},
  idempotent: true,
} as const;
const result: StepResult = { step_id: '0:e1', status: 'accepted', http_status: 202, operation_id: 'op-1', attempts: 1, error: null, reason: null };
const plan = {
  version: 1,
  playbook: 'pb.yaml',
  name: 't',
  company: 'c',
  date: '2026-11-22',
  settings: {},
  inventory: { environments: 1, themes: 1 },
  tasks: [],
  steps: [step],
  skipped: [],
} as never;

describe('run events: each subscriber a module of its own', () => {
  it('fanOut feeds subscribers in order and the run waits for the slow one (the journal records intent before the send)', async () => {
    const seen: string[] = [];
    const journal = {
      append: async (record: { t: string }) => (await new Promise((r) => setTimeout(r, 5)), seen.push(`journal ${record.t}`)),
    } as unknown as Journal;
    const emit = fanOut([{ onEvent: (e) => void seen.push(`first ${e.type}`) }, journalRecorder(journal, () => 0)]);
    await emit({ type: 'attempt', step, attempt: 1 });
    seen.push('sent');
    expect(seen).toEqual(['first attempt', 'journal intent', 'sent']);
  });

  it('report snapshots: written at once, then with each answer, and never after settled()', async () => {
    const path = join(tempDir(), 'report.json');
    const snapshots = new ReportSnapshots(plan, path, { runId: 'r', startedAt: new Date() }, silent, 10);
    const accepted = () => (JSON.parse(readFileSync(path, 'utf8')) as { summary: { accepted: number } }).summary.accepted;
    expect(JSON.parse(readFileSync(path, 'utf8')).summary).toMatchObject({ total: 1, accepted: 0 });
    snapshots.onEvent({ type: 'result', step, result });
    await waitFor(() => accepted() === 1); // the snapshot with the answer landed
    await snapshots.settled();
    snapshots.end();
    expect(JSON.parse(readFileSync(path, 'utf8')).summary.accepted).toBe(1);
    expect(snapshots.stats.count).toBe(1);
  });
});
