import PQueue from 'p-queue';
import { judge, type HealthVerdict, type SiteProbePort } from '../health/http/probe.js';
import type { HealthSpec } from '../health/spec.js';
import { sleepOn, type Clock } from '../util/clock.js';
import type { CacheClear, HealthOutcome, HealthRecord } from './types.js';

/**
 * A task's health checks: its own bound on checks in flight (`health.concurrency`), apart from the
 * API's rate budget and calls in flight, which a check never takes; attempts spaced on the run's
 * clock; nothing new once the run stops.
 */
export class HealthGate {
  readonly #queue: PQueue;

  constructor(
    private readonly probe: SiteProbePort,
    private readonly spec: HealthSpec,
    private readonly clock: Clock,
    /** The run's halt (a second Ctrl-C, finish_within, a 401): no new check, and one in flight ends without a verdict. @default none */
    private readonly signal?: AbortSignal,
  ) {
    this.#queue = new PQueue({ concurrency: spec.concurrency });
  }

  /**
   * Healthy at the first healthy answer; unhealthy after `attempts` answers that were not, `interval`
   * apart, or at once when the site's address is refused. Undefined when interrupted first: a site is
   * never called broken because the run stopped.
   */
  async check(url: string): Promise<HealthVerdict | undefined> {
    const { spec } = this;
    for (let attempt = 1; ; attempt++) {
      if (this.signal?.aborted) return undefined;
      const result = await this.#queue.add(() => this.probe.probe(url, spec, this.signal));
      if (this.signal?.aborted) return undefined;
      const verdict = judge(result, spec);
      // A refused address is no answer that time could change: nothing was sent, and nothing will be.
      if (verdict.healthy || verdict.refused || attempt >= spec.attempts)
        return attempt === 1 ? verdict : { ...verdict, detail: `${verdict.detail} (${attempt} attempts)` };
      await sleepOn(this.clock, spec.interval_ms, this.signal);
    }
  }
}

/**
 * What the two checks say about a step, as a decision table: a site broken after its write fails the
 * step, unless it was already broken before (then it is listed, not blamed: a write to a site not seen
 * healthy before it goes only with `when_broken_before: update`, see life/look-before.ts; otherwise it was
 * held and never sent). With `health.clear_cache` the look after comes once the page cache was
 * cleared; when it could not be, a healthy answer may be the page kept from before the write: nobody
 * saw the page visitors will get, and the step is held.
 *
 * | before    | after     | cache                     | outcome            | step      |
 * | healthy   | healthy   | cleared/off/not available | healthy            | as it was |
 * | any       | healthy   | not cleared               | not checked        | held      |
 * | healthy   | unhealthy | any                       | unhealthy          | failed    |
 * | unhealthy | healthy   | cleared/off/not available | healthy            | as it was |
 * | unhealthy | unhealthy | any                       | unhealthy before   | as it was |
 * | any       | (none)    | any                       | unhealthy before / not checked | as it was |
 *
 * A broken page is broken whichever served it, so an uncleared cache changes nothing when the look
 * after sees one. A clear the service refuses as missing (404, 405: `not available`, cache-clear.ts)
 * is a cache sitefleet has no way to clear, on this night or any other: the look goes on as with
 * `clear_cache: false`, its record saying so. One taken that then failed (`not cleared`) still holds.
 */
export function healthOutcome(
  before: HealthVerdict | undefined,
  after: HealthVerdict | undefined,
  cache?: CacheClear,
): { outcome: HealthOutcome; failsStep: boolean; holdsStep: boolean } {
  const unseen = cache?.outcome === 'not cleared';
  if (after?.healthy)
    return unseen ? { outcome: 'not checked', failsStep: false, holdsStep: true } : { outcome: 'healthy', failsStep: false, holdsStep: false };
  if (before && !before.healthy) return { outcome: 'unhealthy before', failsStep: false, holdsStep: false };
  if (after) return { outcome: 'unhealthy', failsStep: true, holdsStep: false };
  return { outcome: 'not checked', failsStep: false, holdsStep: false };
}

/**
 * The look before a write, read back from the record a cut life left (its `before`, no look after):
 * what a resume judges the look after by, so that a site healthy before and broken now is put back
 * (on_broken) as the run would have. A record whose look after happened has ended: none.
 */
export function baselineOf(health: HealthRecord | undefined): HealthVerdict | undefined {
  if (health?.before === undefined || health.after !== undefined) return undefined;
  return { healthy: health.outcome !== 'unhealthy before', detail: health.before };
}

export function healthRecord(url: string, before: HealthVerdict | undefined, after: HealthVerdict | undefined, cache?: CacheClear): HealthRecord {
  return {
    url,
    outcome: healthOutcome(before, after, cache).outcome,
    ...(cache ? { cache } : {}),
    ...(before ? { before: before.detail } : {}),
    ...(after ? { after: after.detail } : {}),
  };
}
