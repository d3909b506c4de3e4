import type { BackupSlots } from './types.js';

/** Two accounts of one step's slots as one: each removal once (the first account's word on it kept), the later `kept`. */
export function mergeSlots(before: BackupSlots | undefined, more: BackupSlots): BackupSlots {
  const seen = new Set((before?.removed ?? []).map((r) => r.id));
  const removed = [...(before?.removed ?? []), ...more.removed.filter((r) => !seen.has(r.id))];
  const earlier = [...new Set([...(before?.earlier ?? []), ...(more.earlier ?? [])])];
  const kept = more.kept ?? before?.kept;
  return { removed, ...(kept ? { kept } : {}), ...(earlier.length > 0 ? { earlier } : {}) };
}
