import { itemOf, KINDS } from '../inventory/kinds.js';

/**
 * The word a column or line uses for the items its records name: the kind when they are all of one
 * ("theme", as before plugins came; "plugin"), both when a playbook mixed them.
 */
export function kindWord(records: readonly object[]): string {
  const kinds = new Set(records.map((r) => itemOf(r)?.kind));
  const named = KINDS.filter((k) => kinds.has(k));
  return named.length === 0 ? 'theme' : named.join(' or ');
}
