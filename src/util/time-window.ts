/**
 * Maintenance windows: a daily span of wall-clock time in a time zone (`02:00`–`05:00`
 * Europe/Berlin), and `--not-after` deadlines. Wall time is turned into an instant with the zone's
 * offset as Intl reports it, so summer time is the zone's own business: a start that does not exist
 * that day (the hour skipped in spring) moves on by the jump, an ambiguous one (autumn) is its second
 * occurrence.
 * Every function takes `now`; none reads a clock.
 */

/** `settings.window`: `end` at or before `start` crosses midnight (22:00–04:00). */
export interface DailyWindow {
  start: string;
  end: string;
  /** An IANA zone. @default the machine's zone (`TZ`) */
  timezone?: string;
}

/** One opening of a window, in epoch ms. */
export interface Opening {
  open: boolean;
  start: number;
  end: number;
}

export const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** The zone `HH:MM` means when none is named: `TZ`, else the machine's. */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** Why `zone` is not a time zone, or undefined when it is one. */
export function zoneProblem(zone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return undefined;
  } catch {
    return `${JSON.stringify(zone)} is not a time zone (an IANA name such as Europe/Berlin or UTC)`;
  }
}

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallOf(ms: number, zone: string): Wall {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(zone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(ms).map((p) => [p.type, Number(p.value)]));
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute! };
}

/** The zone's offset from UTC at instant `ms`, in ms (to the minute). */
function offsetAt(ms: number, zone: string): number {
  const w = wallOf(ms, zone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute) - (ms - (((ms % 60_000) + 60_000) % 60_000));
}

/** The instant a wall-clock time happens in `zone`. */
function instantOf(w: Wall, zone: string): number {
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute);
  const first = asUtc - offsetAt(asUtc, zone);
  const second = asUtc - offsetAt(first, zone);
  // Two offsets disagree only around a change: the later guess is the one the zone's clocks show.
  return Math.max(first, second);
}

function withDays(w: Wall, days: number, hhmm: string): Wall {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days));
  const [, hour, minute] = HH_MM.exec(hhmm)!;
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: Number(hour), minute: Number(minute) };
}

/** The opening of `window` that holds `now`, or else the next one. */
export function openingAt(window: DailyWindow, now: number): Opening {
  const zone = window.timezone ?? localZone();
  const today = wallOf(now, zone);
  const crosses = window.end <= window.start;
  for (const days of [-1, 0, 1, 2]) {
    const start = instantOf(withDays(today, days, window.start), zone);
    const end = instantOf(withDays(today, days + (crosses ? 1 : 0), window.end), zone);
    if (now < end) return { open: now >= start, start, end };
  }
  throw new Error(`no opening of ${describeWindow(window)} around ${new Date(now).toISOString()}`);
}

export function describeWindow(window: DailyWindow): string {
  return `${window.start}–${window.end} ${window.timezone ?? localZone()}`;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * `--not-after`: ISO 8601 with a date (`2026-11-24T05:00+01:00`; no offset means the local zone), or
 * `HH:MM` in the local zone: its next occurrence after `now` (05:00 said at 23:00 is tomorrow's).
 */
export function parseNotAfter(text: string, now: number): number | { problem: string } {
  if (HH_MM.test(text)) {
    const zone = localZone();
    const today = wallOf(now, zone);
    const at = instantOf(withDays(today, 0, text), zone);
    return at > now ? at : instantOf(withDays(today, 1, text), zone);
  }
  const at = ISO.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? { problem: `--not-after ${text}: give a time as HH:MM (local, or TZ) or ISO 8601 such as 2026-11-24T05:00+01:00` } : at;
}

/** `2026-11-24 05:00 Europe/Berlin`: an instant as the window's zone shows it. */
export function wallText(ms: number, zone = localZone()): string {
  const w = wallOf(ms, zone);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${w.year}-${two(w.month)}-${two(w.day)} ${two(w.hour)}:${two(w.minute)} ${zone}`;
}
