import { describe, expect, it } from 'vitest';
import type { SimulatorOptions } from '../../src/sim/server.js';
import { useSimulator } from '../helpers/sim.js';
import { call, runToEnd } from './http.js';

const start = useSimulator();
/** Operations finish at once; creating calls are not what these tests are about. */
const AT_ONCE: SimulatorOptions = { operationDelayMs: 0, operationVisibleAfterMs: 0, createRate: '100/s' };

async function fill(profile: 'real' | 'spec', options: SimulatorOptions = {}) {
  const { sim } = await start({ profile, ...AT_ONCE, ...options });
  const env = [...sim.fleet.environments.values()][0]!;
  env.backups = env.backups.filter((b) => b.type !== 'manual');
  for (let i = 1; i <= 5; i++) await runToEnd(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: `person-${i}` });
  const manual = () => env.backups.filter((b) => b.type === 'manual');
  return { sim, env, manual };
}

describe('manual backup slots (real-service-notes.md, "Backups and restores")', () => {
  it('real: a sixth manual backup is refused and nothing is removed; a removal frees its slot', async () => {
    const { sim, env, manual } = await fill('real');
    const sixth = await call(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: 'sixth' });
    expect(sixth.status).toBe(400);
    expect(sixth.body.message).toMatch(/limit of 5 manual backups/);
    expect(manual().map((b) => b.note)).toEqual(['person-1', 'person-2', 'person-3', 'person-4', 'person-5']);

    const oldest = manual()[0]!;
    const removed = await runToEnd(sim, 'DELETE', `/sites/environments/backups/${oldest.id}`, undefined);
    expect(removed.accepted.status).toBe(202);
    expect(removed.accepted.body.operation_id).toMatch(/^backups:delete-/);
    expect(removed.done.body).toEqual({ status: 200, message: 'backups:delete completed', data: null });
    expect(manual()).toHaveLength(4);
    expect(sim.fleet.backupStates.has(oldest.id)).toBe(false);
    expect((await call(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: 'sixth' })).status).toBe(202);
    const unknown = await call(sim, 'DELETE', `/sites/environments/backups/${oldest.id}`);
    expect([unknown.status, unknown.body.message]).toEqual([404, `Backup ${oldest.id} not found`]);
  });

  it('a backup being made counts: the fifth slot taken by a running creation refuses the next at once', async () => {
    const { sim } = await start({ profile: 'real', ...AT_ONCE, operationDelayMs: 60_000 });
    const env = [...sim.fleet.environments.values()][0]!;
    env.backups = env.backups
      .filter((b) => b.type !== 'manual')
      .concat([1, 2, 3, 4].map((i) => ({ id: 9000 + i, name: `m-${i}`, note: `person-${i}`, type: 'manual', created_at: i })));
    expect((await call(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: 'fifth' })).status).toBe(202);
    expect((await call(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: 'sixth' })).status).toBe(400);
  });

  it('spec: no limit unless asked for; manualBackupLimit sets one on either profile', async () => {
    const spec = await fill('spec');
    expect((await call(spec.sim, 'POST', `/sites/environments/${spec.env.id}/manual-backups`, { tag: 'sixth' })).status).toBe(202);
    const three = await fill('spec', { manualBackupLimit: 7 });
    await runToEnd(three.sim, 'POST', `/sites/environments/${three.env.id}/manual-backups`, { tag: 'six' });
    await runToEnd(three.sim, 'POST', `/sites/environments/${three.env.id}/manual-backups`, { tag: 'seven' });
    expect((await call(three.sim, 'POST', `/sites/environments/${three.env.id}/manual-backups`, { tag: 'eight' })).status).toBe(400);
  });
});
