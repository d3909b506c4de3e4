import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A seal keyed by the API token on what sitefleet writes and later acts on (a journal's start
 * record, a saved plan): a file read back from a folder others may write is taken as sitefleet's own
 * only when it carries the seal of the token it is run with. Nobody without the token can forge one,
 * and the seal says nothing of the token (an HMAC-SHA256 under a key derived from it, per purpose).
 */
export type SealPurpose = 'journal' | 'plan';

export function sealOf(token: string, purpose: SealPurpose, value: object): string {
  const key = createHmac('sha256', token).update(`sitefleet ${purpose} seal v1`).digest();
  return createHmac('sha256', key)
    .update(canonicalJson(withoutSeal(value)))
    .digest('hex');
}

/** Whether `value.seal` is the seal of `token` over the rest of `value`. */
export function hasSeal(token: string, purpose: SealPurpose, value: object & { seal?: unknown }): boolean {
  if (typeof value.seal !== 'string' || !/^[0-9a-f]{64}$/.test(value.seal)) return false;
  return timingSafeEqual(Buffer.from(value.seal, 'hex'), Buffer.from(sealOf(token, purpose, value), 'hex'));
}

function withoutSeal(value: object): object {
  const { seal: _seal, ...rest } = value as { seal?: unknown };
  return rest;
}

/** JSON with object keys sorted, so a file re-indented or re-ordered by a tool keeps its seal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
