import type { Rollout } from '../playbook/types.js';

/** FNV-1a: a stable hash, so wave membership depends on the targets, not on listing order. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Splits a task's targets into waves: `canary` targets first, then cumulative shares of all of them
 * (plan.ts puts every call of a target in its target's wave). Membership is drawn from a hash of task
 * and target, so it is the same for the same inventory and does not always put the alphabetically
 * first sites first. Returns each target's wave, by the ids given.
 */
export function assignWaves(taskName: string, targetIds: string[], rollout: Rollout): Map<string, number> {
  const order = [...targetIds].sort((a, b) => fnv1a(`${taskName}\0${a}`) - fnv1a(`${taskName}\0${b}`) || (a < b ? -1 : 1));
  const bounds: number[] = [];
  const canary = Math.min(rollout.canary ?? 0, order.length);
  if (canary > 0) bounds.push(canary);
  for (const share of rollout.waves ?? ['100%']) {
    const upTo = Math.ceil((order.length * Number(share.replace('%', ''))) / 100);
    if (upTo > (bounds.at(-1) ?? 0)) bounds.push(upTo);
  }
  if ((bounds.at(-1) ?? 0) < order.length) bounds.push(order.length);
  const waves = new Map<string, number>();
  let wave = 0;
  for (const [i, id] of order.entries()) {
    while (i >= bounds[wave]!) wave++;
    waves.set(id, wave);
  }
  return waves;
}
