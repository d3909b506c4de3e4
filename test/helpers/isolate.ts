import { readFileSync } from 'node:fs';
import type { Report, ReportResult } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import type { SimEnvironment } from '../../src/sim/fleet.js';

/**
 * Plugins p0…p3 at 1.0.0 with 1.1.0 offered, active, on the first live environment (`live: 'first'`)
 * or on every live one (`'all'`), nothing on the others; p0 1.1.0 breaks a site (with a fatal error
 * in its log). The environments that got them, and the names.
 */
export function fourPlugins(sim: Simulator, live: 'first' | 'all' = 'first'): { live: SimEnvironment; lives: SimEnvironment[]; names: string[] } {
  sim.fleet.pluginCatalog.clear();
  const names = ['p0', 'p1', 'p2', 'p3'];
  for (const name of names) sim.fleet.pluginCatalog.set(name, { name, title: name, versions: ['1.0.0', '1.1.0'], vulnerable: new Set() });
  const every = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live');
  const lives = live === 'all' ? every : every.slice(0, 1);
  for (const env of sim.fleet.environments.values()) {
    env.plugins.clear();
    if (lives.includes(env))
      for (const name of names) env.plugins.set(name, { version: '1.0.0', status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
  }
  sim.breakPlugin('p0@1.1.0');
  return { live: lives[0]!, lives, names };
}

/** Every plugin update on every live environment, in bulk, isolating what breaks a site; `extra`: more lines of the task. */
export function isolatingNight(sim: Simulator, extra = ''): string {
  return `version: 1
name: isolate
settings: { rate_limit: 50/s }
tasks:
  - name: plugin updates
    action: plugins.update
    target: { environment: live }
    backup_first: true
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: isolate }
    max_failures: 100
${extra}`;
}

/** The night's write to one environment, as the report at `path` has it now. */
export function isolatedWrite(path: string, envId: string): ReportResult {
  const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
  return report.results.find((r) => r.target.env_id === envId && r.request?.method === 'PUT')!;
}

/** What each round (and the write) sent to one environment: the plugin names of its bulk updates, in order. */
export function sentTo(sim: Simulator, envId: string, from = 0): string[][] {
  return sim.log
    .filter((e) => e.endpoint === 'bulkUpdatePlugins' && e.seq >= from && e.path.split('/')[4] === envId)
    .map((e) => (e.body as { plugins: { name: string }[] }).plugins.map((p) => p.name));
}
