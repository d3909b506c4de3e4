import type { Subscriber } from '../app/run-events/subscriber.js';
import type { RunLineSources } from '../app/view.js';
import type { Output } from '../app/io.js';
import { RunPhase } from './run-phase.js';

/**
 * The status line on an interactive stderr: the run's phase (sending, then waiting for operations),
 * its counts and ETA, the next poll, and the service's pause when there is one. Redrawn four times a
 * second, so a countdown moves; cron and CI draw nothing.
 */
export function progressLine(
  { steps, waits }: { steps: number; waits: ReadonlySet<number> },
  sources: RunLineSources,
  stream: Output,
  enabled: boolean,
): Subscriber {
  const phase = new RunPhase(steps, waits);
  const draw = () => {
    const paused = sources.pausedForMs();
    const note = paused > 0 ? `  paused by the service's rate limit: ${Math.ceil(paused / 1000)}s` : '';
    stream.write(`\r\x1b[K${phase.line(performance.now(), sources.nextLookMs(), sources.closed())}${note}`);
  };
  const on = enabled && steps > 0;
  const ticker = on ? setInterval(draw, 250) : undefined;
  ticker?.unref();
  return {
    onEvent(event) {
      phase.onEvent(event, performance.now());
    },
    end() {
      clearInterval(ticker);
      if (on) stream.write('\r\x1b[K');
    },
  };
}
