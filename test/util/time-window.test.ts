import { describe, expect, it } from 'vitest';
import { openingAt, parseNotAfter, wallText, zoneProblem } from '../../src/util/time-window.js';
import { enterWindow } from '../../src/app/window.js';
import { capturedIo } from '../../src/app/io.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const span = (o: { open: boolean; start: number; end: number }) => ({ open: o.open, start: iso(o.start), end: iso(o.end) });

describe('daily windows', () => {
  const berlin = { start: '02:00', end: '05:00', timezone: 'Europe/Berlin' };

  it('inside, before and after a window, in its zone (winter: UTC+1)', () => {
    expect(span(openingAt(berlin, at('2026-11-23T02:00:00Z')))).toEqual({ open: true, start: '2026-11-23T01:00:00.000Z', end: '2026-11-23T04:00:00.000Z' });
    expect(span(openingAt(berlin, at('2026-11-23T00:59:00Z')))).toEqual({ open: false, start: '2026-11-23T01:00:00.000Z', end: '2026-11-23T04:00:00.000Z' });
    // The end is not in the window: at 05:00 the next opening is tomorrow's.
    expect(span(openingAt(berlin, at('2026-11-23T04:00:00Z')))).toEqual({ open: false, start: '2026-11-24T01:00:00.000Z', end: '2026-11-24T04:00:00.000Z' });
  });

  it('summer time: the same wall times an hour earlier in UTC; a start in the skipped hour moves on by the jump', () => {
    expect(span(openingAt(berlin, at('2026-07-01T01:30:00Z')))).toEqual({ open: true, start: '2026-07-01T00:00:00.000Z', end: '2026-07-01T03:00:00.000Z' });
    // 2026-03-29: Berlin's clocks go from 02:00 to 03:00; a 02:30 start is 03:30 CEST.
    expect(span(openingAt({ ...berlin, start: '02:30' }, at('2026-03-28T12:00:00Z')))).toEqual({
      open: false,
      start: '2026-03-29T01:30:00.000Z',
      end: '2026-03-29T03:00:00.000Z',
    });
  });

  it('a window whose end is before its start crosses midnight', () => {
    const night = { start: '22:00', end: '04:00', timezone: 'UTC' };
    expect(span(openingAt(night, at('2026-11-23T23:00:00Z')))).toEqual({ open: true, start: '2026-11-23T22:00:00.000Z', end: '2026-11-24T04:00:00.000Z' });
    expect(span(openingAt(night, at('2026-11-23T03:00:00Z')))).toEqual({ open: true, start: '2026-11-22T22:00:00.000Z', end: '2026-11-23T04:00:00.000Z' });
    expect(span(openingAt(night, at('2026-11-23T12:00:00Z')))).toEqual({ open: false, start: '2026-11-23T22:00:00.000Z', end: '2026-11-24T04:00:00.000Z' });
  });

  it('--not-after: HH:MM is its next occurrence in the local zone (TZ); ISO 8601 as written; anything else is a problem', () => {
    const tz = process.env.TZ;
    process.env.TZ = 'Asia/Kolkata';
    try {
      expect(iso(parseNotAfter('05:00', at('2026-11-23T12:00:00Z')) as number)).toBe('2026-11-23T23:30:00.000Z');
      expect(iso(parseNotAfter('23:00', at('2026-11-23T12:00:00Z')) as number)).toBe('2026-11-23T17:30:00.000Z');
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
    expect(parseNotAfter('2026-11-24T05:00+01:00', 0)).toBe(at('2026-11-24T04:00:00Z'));
    expect(parseNotAfter('tomorrow', 0)).toEqual({ problem: expect.stringContaining('--not-after tomorrow: give a time as HH:MM') });
    expect(parseNotAfter('2026-11-24', 0)).toHaveProperty('problem');
    expect(zoneProblem('Europe/Berlin')).toBeUndefined();
    expect(zoneProblem('Europe/Nowhere')).toContain('is not a time zone');
    expect(wallText(at('2026-11-23T01:00:00Z'), 'Europe/Berlin')).toBe('2026-11-23 02:00 Europe/Berlin');
  });
});

describe('entering a window', () => {
  const io = capturedIo();
  const settings = { window: { start: '02:00', end: '05:00', timezone: 'UTC' } };

  it('outside: exit 5 naming the window and its next opening; --wait-window waits for it and gives its end', async () => {
    const before = at('2026-11-23T01:59:59.900Z');
    await expect(enterWindow(io, settings, {}, { say: () => undefined, now: () => before })).rejects.toMatchObject({
      exitCode: 5,
      message: 'outside settings.window 02:00–05:00 UTC: the next opens at 2026-11-23 02:00 UTC (in 0s); start then, or add --wait-window to wait for it',
    });
    const said: string[] = [];
    const t0 = Date.now();
    const deadline = await enterWindow(io, settings, { waitWindow: true }, { say: (text) => said.push(text), now: () => before + (Date.now() - t0) });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    expect(said).toEqual(['waiting for settings.window 02:00–05:00 UTC: it opens at 2026-11-23 02:00 UTC (in 0s)']);
    expect(deadline).toEqual({
      at: at('2026-11-23T05:00:00Z'),
      source: 'settings.window 02:00–05:00 UTC',
      reason: 'settings.window 02:00–05:00 UTC ended at 2026-11-23 05:00 UTC',
    });
  });

  it('inside: the earlier of the window’s end and --not-after', async () => {
    const now = () => at('2026-11-23T03:00:00Z');
    expect((await enterWindow(io, settings, { notAfter: '2026-11-23T04:00:00Z' }, { say: () => undefined, now }))?.source).toBe(
      '--not-after 2026-11-23T04:00:00Z',
    );
    expect((await enterWindow(io, settings, { notAfter: '2026-11-23T06:00:00Z' }, { say: () => undefined, now }))?.at).toBe(at('2026-11-23T05:00:00Z'));
    await expect(enterWindow(io, {}, { waitWindow: true }, { say: () => undefined, now })).rejects.toMatchObject({ exitCode: 2 });
  });
});
