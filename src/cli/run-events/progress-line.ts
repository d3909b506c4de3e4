import { Progress } from '../progress.js';
import type { Subscriber } from './subscriber.js';

/**
 * The status line on an interactive stderr, counting answers, with the service's pause when there is
 * one (`pausedForMs`). A pause of a second or more is seen by at least three redraws; cron and CI
 * draw nothing.
 */
export function progressLine(steps: number, enabled: boolean, pausedForMs: () => number): Subscriber {
  const progress = new Progress(steps, process.stderr, enabled);
  progress.note = () => {
    const paused = pausedForMs();
    return paused > 0 ? `paused by the service's rate limit: ${Math.ceil(paused / 1000)}s` : undefined;
  };
  const ticker = progress.enabled ? setInterval(() => progress.tick(), 250) : undefined;
  ticker?.unref();
  return {
    onEvent(event) {
      if (event.type === 'result') progress.step(event.result.status === 'failed' || event.result.status === 'unknown');
    },
    end() {
      clearInterval(ticker);
      progress.end();
    },
  };
}
