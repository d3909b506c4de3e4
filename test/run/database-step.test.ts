import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AFTER_UPDATE, CORE_DATABASE } from '../../src/actions/after-update.js';
import type { Step, TaskSummary } from '../../src/plan/plan.js';
import type { CallOutcome, CallPort } from '../../src/run/caller.js';
import { databaseCommands } from '../../src/plan/database-commands.js';
import { heldByDatabase, updateDatabase, type DatabaseContext } from '../../src/run/life/database-step.js';
import type { DatabaseRun, StepResult } from '../../src/run/types.js';
import type { Watcher } from '../../src/run/watcher.js';

const common = JSON.parse(readFileSync(new URL('../../schemas/api/common.schema.json', import.meta.url), 'utf8')) as {
  $defs: { wp_command: { pattern: string; maxLength: number } };
};

const core = { index: 0, name: 'wp', action: 'core.update', wait: true } as unknown as TaskSummary;
const plugins = { ...core, action: 'plugins.update', after_update: ['woocommerce'] } as TaskSummary;
const step = (body: unknown, role?: Step['role']) => ({ id: 's', target: { env_id: 'e1' }, body, ...(role ? { role } : {}) }) as unknown as Step;
const coreStep = step({ wp_command: 'wp core update --version=6.7.2' });
const done: StepResult = { step_id: 's', status: 'succeeded', http_status: 202, operation_id: 'op1', attempts: 1, error: null, reason: null };

/** A run whose WP-CLI calls answer `answers` in turn, whose operations end as `ends` says, and whose journal is kept. */
function context(answers: CallOutcome[], ends: 'succeeded' | 'failed' = 'succeeded', halted = false) {
  const sent: unknown[] = [];
  const journal: StepResult[] = [];
  const watched: string[] = [];
  const caller = {
    withPlace: (_p: unknown, _e: unknown, work: (place: never) => Promise<unknown>) => work(undefined as never),
    call: async (_endpoint: string, _params: unknown, body: unknown) => (sent.push(body), answers.shift()!),
  } as unknown as CallPort;
  const watcher = {
    watch: (id: string) => (
      watched.push(id),
      {
        expedite: () => undefined,
        done: Promise.resolve(
          ends === 'succeeded' ? { state: 'succeeded', polls: 1 } : { state: 'failed', message: 'Error: WordPress database update failed.', polls: 1 },
        ),
      }
    ),
  } as unknown as Watcher;
  const abort = new AbortController();
  if (halted) abort.abort();
  const ctx: DatabaseContext = {
    caller,
    watcher,
    watch: {} as DatabaseContext['watch'],
    record: async (_s, r) => void journal.push(r),
    interrupt: abort.signal,
  };
  return { ctx, sent, journal, watched };
}
const accepted = (id: string): CallOutcome => ({ ok: true, value: { status: 202, data: { operation_id: id, status: 202 } }, attempts: 1 });
const statuses = (journal: StepResult[]) => journal.map((r) => r.database!.map((d) => d.status).join(','));

describe('the database step', () => {
  it("sends only commands of its fixed table, each within the service's wp_command pattern", () => {
    const pattern = new RegExp(common.$defs.wp_command.pattern);
    for (const command of [CORE_DATABASE, ...Object.values(AFTER_UPDATE).flat()]) expect(command, command).toMatch(pattern);
  });

  it('a core write calls for wp core update-db; a plugins write for the own step of the slugs its task names that it wrote; a restore point for nothing', () => {
    expect(databaseCommands(core, coreStep)).toEqual(['wp core update-db']);
    expect(databaseCommands(core, step({}, 'backup'))).toEqual([]);
    // A staging run moves its own environment's WordPress: its database step runs there too.
    expect(databaseCommands(core, step({ wp_command: 'wp core update --version=6.7.2' }, 'staging'))).toEqual(['wp core update-db']);
    expect(databaseCommands(plugins, step({ plugins: [{ name: 'jetpack' }, { name: 'woocommerce' }] }))).toEqual(['wp wc update']);
    expect(databaseCommands(plugins, step({ name: 'woocommerce', update_version: '9.1.0' }))).toEqual(['wp wc update']);
    expect(databaseCommands(plugins, step({ plugins: [{ name: 'jetpack' }] }))).toEqual([]);
    expect(databaseCommands({ ...plugins, after_update: undefined }, step({ plugins: [{ name: 'woocommerce' }] }))).toEqual([]);
  });

  it('journals the command sending before it leaves, then accepted, then its operation’s end', async () => {
    const { ctx, sent, journal } = context([accepted('db1')]);
    const result = await updateDatabase(ctx, core, coreStep, done);
    expect(sent).toEqual([{ wp_command: 'wp core update-db' }]);
    expect(statuses(journal)).toEqual(['sending', 'accepted', 'succeeded']);
    expect(result).toMatchObject({
      status: 'succeeded',
      database: [{ command: 'wp core update-db', after: 'update', status: 'succeeded', operation_id: 'db1' }],
    });
    expect(heldByDatabase(result)).toBe(result);
  });

  it('a write whose operation did not succeed has no database step', async () => {
    const { ctx, sent } = context([]);
    const failed = { ...done, status: 'failed' as const };
    expect(await updateDatabase(ctx, core, coreStep, failed)).toBe(failed);
    expect(sent).toEqual([]);
  });

  it('resume: a command journaled sending is sent again (safe to repeat); one accepted is followed, not sent; one ended is left', async () => {
    const run = (status: DatabaseRun['status']): StepResult => ({
      ...done,
      database: [{ command: 'wp core update-db', after: 'update', status, operation_id: status === 'accepted' ? 'db0' : null }],
    });
    const again = context([accepted('db2')]);
    expect((await updateDatabase(again.ctx, core, coreStep, run('sending'))).database).toEqual([
      { command: 'wp core update-db', after: 'update', status: 'succeeded', operation_id: 'db2' },
    ]);
    expect(again.sent).toHaveLength(1);
    const followed = context([]);
    expect((await updateDatabase(followed.ctx, core, coreStep, run('accepted'))).database![0]!.status).toBe('succeeded');
    expect([followed.sent, followed.watched]).toEqual([[], ['db0']]);
    const ended = context([]);
    expect(await updateDatabase(ended.ctx, core, coreStep, run('failed'))).toEqual(run('failed'));
    expect(ended.sent).toEqual([]);
  });

  it('a failed command holds the write database_not_updated, counted against the budget; a halt sends nothing (not sent)', async () => {
    const { ctx } = context([accepted('db3')], 'failed');
    const held = heldByDatabase(await updateDatabase(ctx, core, coreStep, done));
    expect(held).toMatchObject({
      status: 'held',
      held: { code: 'database_not_updated', counts_against_budget: true },
      database: [{ status: 'failed', reason: 'operation failed: Error: WordPress database update failed.' }],
    });
    const halted = context([], 'succeeded', true);
    const left = await updateDatabase(halted.ctx, core, coreStep, done);
    expect([halted.sent, left.database![0]!.status, heldByDatabase(left).status]).toEqual([[], 'not sent', 'held']);
    // Resume takes the held write on: its command goes, and it ends succeeded.
    const resumed = context([accepted('db4')]);
    const ended = heldByDatabase(await updateDatabase(resumed.ctx, core, coreStep, heldByDatabase(left)));
    expect([resumed.sent.length, ended.status, ended.held, ended.database![0]!.status]).toEqual([1, 'succeeded', undefined, 'succeeded']);
  });
});
