import { versionItem, type InstalledItem } from '../../src/inventory/inventory.js';
import type { Kind } from '../../src/inventory/kinds.js';

/** An installed item for a pure test: active, nothing flagged, an update offered when `update` is given (as a listing shows it: no `offers`). */
export function installedItem(kind: Kind, name: string, version: string, update?: string, o: Partial<InstalledItem> = {}): InstalledItem {
  const { offers: _offers, ...item } = versionItem(kind, name, version, update === undefined ? [] : [update]);
  return { ...item, ...o };
}
