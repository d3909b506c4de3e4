import { installedOf, type Environment, type InstalledItem, type Inventory } from '../inventory/inventory.js';
import { KIND_TABLE, KINDS, type Kind } from '../inventory/kinds.js';
import type { Playbook, Selector, Task } from '../playbook/types.js';
import { matchesAny } from '../util/glob.js';

export function matches(env: Environment, selector: Selector): boolean {
  if (!matchesAny(env.site, selector.site)) return false;
  if (!matchesAny(env.name, selector.environment)) return false;
  for (const kind of KINDS) {
    const slugs = selector[kind];
    // A kind of one item (WordPress) is picked by the version it runs, the others by slug.
    const field = (t: InstalledItem) => (KIND_TABLE[kind].only === undefined ? t.name : t.version);
    if (slugs !== undefined && !installedOf(env, kind).some((t) => matchesAny(field(t), slugs))) return false;
  }
  if (selector.ids !== undefined && !selector.ids.some((id) => id.toLowerCase() === env.id.toLowerCase())) return false;
  if (selector.exclude !== undefined && matches(env, selector.exclude)) return false;
  return true;
}

/** The kinds of item a task's selector names (`theme:`, `plugin:`, in `exclude` too): the plan reads their listings to select. */
export function selectorKinds(playbook: Pick<Playbook, 'targets'>, task: Task): Kind[] {
  const selector = typeof task.target === 'string' ? playbook.targets[task.target] : task.target;
  const named = (s: Selector | undefined): Kind[] => (s ? [...KINDS.filter((k) => s[k] !== undefined), ...named(s.exclude)] : []);
  return [...new Set(named(selector))];
}

/** The environments a task targets, in inventory order. */
export function selectEnvironments(playbook: Pick<Playbook, 'targets'>, task: Task, inventory: Inventory): Environment[] {
  if (task.target === undefined) return [];
  if (task.target === 'all') return inventory.environments;
  const selector = typeof task.target === 'string' ? playbook.targets[task.target] : task.target;
  if (!selector) return [];
  return inventory.environments.filter((env) => matches(env, selector));
}
