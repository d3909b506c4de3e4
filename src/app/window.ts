import { OutsideWindowError, UsageError } from '../errors.js';
import type { PlaybookSettings } from '../playbook/types.js';
import { describeWindow, localZone, openingAt, parseNotAfter, wallText } from '../util/time-window.js';
import { formatDuration } from '../util/duration.js';
import { onInterrupt } from './signals.js';
import type { Io } from './io.js';

export interface WindowOptions {
  /** `--not-after TIME`: no write is sent after it. */
  notAfter?: string;
  /** `--wait-window`: outside the window, wait for it to open instead of exiting 5. */
  waitWindow?: boolean;
}

/** When this run must stop sending, and why in words (the skipped steps' reason says it). */
export interface Deadline {
  at: number;
  /** `settings.window 02:00–05:00 Europe/Berlin`, `--not-after 05:00`. */
  source: string;
  /** Why a step was not sent, after "window closed: ". */
  reason: string;
}

/** Where a wait for the window is said (a line for the person), and the clock it is judged by (a test's own). */
export interface WindowTell {
  say(text: string): void;
  now?: () => number;
}

/**
 * Where the run stands against its window (`settings.window`) and `--not-after`: inside, the moment
 * it must stop sending; outside, exit 5 naming the window and when it opens next, or (with
 * `--wait-window`) a wait for it that Ctrl-C ends. Undefined when there is neither.
 */
export async function enterWindow(
  io: Pick<Io, 'signals' | 'exitNow'>,
  settings: PlaybookSettings,
  opts: WindowOptions,
  tell: WindowTell,
): Promise<Deadline | undefined> {
  const interrupt = new AbortController();
  const restore = onInterrupt(io, () => interrupt.abort());
  try {
    return await windowOf(settings, opts, { now: Date.now, ...tell }, interrupt.signal);
  } finally {
    restore();
  }
}

async function windowOf(
  settings: PlaybookSettings,
  opts: WindowOptions,
  { say, now }: Required<WindowTell>,
  signal: AbortSignal,
): Promise<Deadline | undefined> {
  const notAfter = opts.notAfter === undefined ? undefined : parseNotAfter(opts.notAfter, now());
  if (typeof notAfter === 'object') throw new UsageError(notAfter.problem);
  const window = settings.window;
  if (!window) {
    if (opts.waitWindow) throw new UsageError('--wait-window: the playbook has no settings.window to wait for');
    if (notAfter === undefined) return undefined;
    if (notAfter <= now()) throw new OutsideWindowError(`--not-after ${opts.notAfter} (${wallText(notAfter)}) has passed: nothing was sent`);
    return byNotAfter(opts.notAfter!, notAfter);
  }
  const zone = window.timezone ?? localZone();
  const named = `settings.window ${describeWindow(window)}`;
  let opening = openingAt(window, now());
  if (!opening.open) {
    const opens = `the next opens at ${wallText(opening.start, zone)} (in ${formatDuration((opening.start - now()) / 1000)})`;
    if (notAfter !== undefined && notAfter <= opening.start)
      throw new OutsideWindowError(
        `outside ${named}, and --not-after ${opts.notAfter} comes before ${opens.replace('the next opens', 'it opens')}: nothing was sent`,
      );
    if (!opts.waitWindow) throw new OutsideWindowError(`outside ${named}: ${opens}; start then, or add --wait-window to wait for it`);
    say(`waiting for ${named}: ${opens.replace('the next opens', 'it opens')}`);
    await sleepUntil(opening.start, signal, now);
    if (signal.aborted) throw new OutsideWindowError(`stopped while waiting for ${named}: nothing was sent`);
    opening = openingAt(window, now());
  }
  const end = { at: opening.end, source: named, reason: `${named} ended at ${wallText(opening.end, zone)}` };
  return notAfter !== undefined && notAfter < end.at ? byNotAfter(opts.notAfter!, notAfter) : end;
}

function byNotAfter(text: string, at: number): Deadline {
  return { at, source: `--not-after ${text}`, reason: `--not-after ${text} (${wallText(at)}) passed` };
}

/** Sleeps to a wall-clock moment in steps of at most a minute (a laptop's sleep or a clock step would stretch one long timer). */
async function sleepUntil(at: number, signal: AbortSignal | undefined, now: () => number): Promise<void> {
  while (!signal?.aborted && now() < at) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(60_000, at - now()));
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/** A signal that aborts at the deadline with its reason; `dispose` clears the timer. */
export function closingAt(deadline: Deadline | undefined, now = Date.now): { signal?: AbortSignal; dispose(): void } {
  if (!deadline) return { dispose: () => undefined };
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  // Re-armed each minute at most, for the same reason as sleepUntil.
  const arm = () => {
    const left = deadline.at - now();
    if (left <= 0) return controller.abort(deadline.reason);
    timer = setTimeout(arm, Math.min(60_000, left));
    timer.unref();
  };
  arm();
  return { signal: controller.signal, dispose: () => clearTimeout(timer) };
}
