import { installedOf, type Environment, type Inventory } from '../inventory/inventory.js';
import type { Playbook, Selector, Task } from '../playbook/types.js';
import { matchesAny } from '../util/glob.js';

export function matches(env: Environment, selector: Selector): boolean {
  if (!matchesAny(env.site, selector.site)) return false;
  if (!matchesAny(env.name, selector.environment)) return false;
  if (selector.theme !== undefined && !installedOf(env, 'theme').some((t) => matchesAny(t.name, selector.theme))) return false;
  if (selector.ids !== undefined && !selector.ids.some((id) => id.toLowerCase() === env.id.toLowerCase())) return false;
  if (selector.exclude !== undefined && matches(env, selector.exclude)) return false;
  return true;
}

/** The environments a task targets, in inventory order. */
export function selectEnvironments(playbook: Pick<Playbook, 'targets'>, task: Task, inventory: Inventory): Environment[] {
  if (task.target === undefined) return [];
  if (task.target === 'all') return inventory.environments;
  const selector = typeof task.target === 'string' ? playbook.targets[task.target] : task.target;
  if (!selector) return [];
  return inventory.environments.filter((env) => matches(env, selector));
}
