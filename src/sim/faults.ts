import { Random } from './random.js';

/**
 * Faults the simulator injects, each with a probability per request:
 * - `500`, `502`, `503`: answer that status before doing anything;
 * - `429`: a rate-limit answer (Retry-After: 1) even below the limit, as bursts from other clients cause;
 * - `reset`: drop the connection before doing anything;
 * - `lost`: apply the request, then drop the connection (the client never hears of it);
 * - `malformed`: apply the request, then answer a truncated JSON body;
 * - `slow`: apply the request, then answer `slowMs` later.
 */
export const FAULT_KINDS = ['500', '502', '503', '429', 'reset', 'lost', 'malformed', 'slow'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type FaultRates = Partial<Record<FaultKind, number>>;

/** `500=0.05,reset=0.02,lost=0.01` → rates. `5xx=0.05` spreads evenly over 500, 502 and 503. */
export function parseFaults(text: string): FaultRates {
  const rates: FaultRates = {};
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, value] = part.split('=');
    const p = Number(value);
    if (!name || value === undefined || !(p >= 0 && p <= 1))
      throw new Error(`fault ${JSON.stringify(part)} must be NAME=PROBABILITY with a probability from 0 to 1`);
    if (name === '5xx') {
      for (const k of ['500', '502', '503'] as const) rates[k] = (rates[k] ?? 0) + p / 3;
    } else if ((FAULT_KINDS as readonly string[]).includes(name)) {
      rates[name as FaultKind] = p;
    } else {
      throw new Error(`unknown fault ${JSON.stringify(name)}; known: ${FAULT_KINDS.join(', ')}, 5xx`);
    }
  }
  return rates;
}

/** Draws at most one fault per request from a seeded generator, so a failing run can be replayed. */
export class FaultPlan {
  readonly #rng: Random;
  constructor(
    public rates: FaultRates,
    seed: number,
  ) {
    this.#rng = new Random(seed ^ 0x5eed);
  }

  draw(): FaultKind | undefined {
    let r = this.#rng.next();
    for (const kind of FAULT_KINDS) {
      const p = this.rates[kind] ?? 0;
      if (r < p) return kind;
      r -= p;
    }
    return undefined;
  }

  /** A latency in [min, max] ms. */
  latency(range: [number, number] | undefined): number {
    if (!range) return 0;
    return range[0] + this.#rng.next() * (range[1] - range[0]);
  }
}
