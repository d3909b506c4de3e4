import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { Writable } from 'node:stream';
import { AbortedError, AuthenticationError, ServerError } from '../../src/errors.js';
import type { CallPort } from '../../src/run/caller.js';
import { findRestorePoint } from '../../src/run/restore-point.js';
import type { Step } from '../../src/plan/plan.js';

const ENV = '00000000-0000-4000-8000-000000000001';
const TAG = 'sitefleet-before-themes-2026-11-24';
const step = { params: { env_id: ENV }, body: { tag: TAG } } as unknown as Step;

/** A port whose one read (the backup list) answers `answer`; nothing else is called. */
const reading = (answer: () => Promise<unknown>) => ({ read: answer }) as unknown as CallPort;

/** A logger whose lines the test reads back. */
function recorded() {
  const lines: { level: number; msg: string; err?: string }[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(String(chunk))), done()) });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

describe('findRestorePoint: the backup a restore-point step made, read back from the list', () => {
  it('finds the id by its tag', async () => {
    const { logger, lines } = recorded();
    // Dated in seconds, as the service may: kept as the moment a restore would go back to.
    const list = { environment: { display_name: 'live', backups: [{ id: 41, name: TAG, note: TAG, type: 'manual', created_at: 1_772_331_240 }] } };
    expect(
      await findRestorePoint(
        reading(() => Promise.resolve(list)),
        step,
        logger,
      ),
    ).toEqual({ point: { tag: TAG, backup_id: 41, taken_at: '2026-03-01T02:14:00.000Z' } });
    expect(lines).toEqual([]);
  });

  it('a list that does not show it: id null, and a log line says so', async () => {
    const { logger, lines } = recorded();
    const found = await findRestorePoint(
      reading(() => Promise.resolve({ environment: { backups: [] } })),
      step,
      logger,
    );
    expect(found).toEqual({ point: { tag: TAG, backup_id: null } });
    expect(lines.map((l) => l.msg)).toEqual([expect.stringContaining('does not show the restore point')]);
  });

  it('a 5xx or an interruption: id null, with a log line naming why (never silent)', async () => {
    for (const error of [new ServerError(503, 'GET', `/sites/environments/${ENV}/backups`, 'down'), new AbortedError('interrupted')]) {
      const { logger, lines } = recorded();
      const found = await findRestorePoint(
        reading(() => Promise.reject(error)),
        step,
        logger,
      );
      expect(found).toEqual({ point: { tag: TAG, backup_id: null } });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ msg: expect.stringContaining('could not read the backup list'), err: error.message });
    }
  });

  it('a 401 stops the run as any other call’s 401 does', async () => {
    const { logger } = recorded();
    const error = new AuthenticationError(401, 'GET', `/sites/environments/${ENV}/backups`, 'key revoked');
    const found = await findRestorePoint(
      reading(() => Promise.reject(error)),
      step,
      logger,
    );
    expect(found.point).toEqual({ tag: TAG, backup_id: null });
    expect(found.stop).toEqual({ kind: 'auth', reason: 'authentication failed (401): key revoked' });
  });

  it('an error that is no answer of the service (a defect) is thrown, not turned into "no id"', async () => {
    const { logger } = recorded();
    await expect(
      findRestorePoint(
        reading(() => Promise.reject(new TypeError('x is undefined'))),
        step,
        logger,
      ),
    ).rejects.toThrow(TypeError);
  });
});
