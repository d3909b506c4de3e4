import type { Exposure, UpdateAge } from '../inventory/exposure.js';
import { itemOf, KIND_TABLE, KINDS } from '../inventory/kinds.js';
import { forCsv, jsonText, terminalMessage } from '../util/safe-text.js';
import { table } from './render.js';

/**
 * `inventory --exposure`: one row per environment running a vulnerable item version (a theme, a
 * plugin), grouped by item, with the update the listing offers and whether that one is flagged too. JSON keeps the
 * counts and every string exactly; CSV and the table make service text safe for their sink.
 */
export function renderExposure(exposure: Exposure, format: 'table' | 'json' | 'csv'): string {
  if (format === 'json') return jsonText(exposure, 2);
  const withSiteIds = exposure.items.some((t) => t.environments.some((e) => e.site_id !== undefined));
  const withAges = exposure.items.some((t) => t.environments.some((e) => e.release_age !== undefined));
  const header = [
    'kind',
    'name',
    'site',
    ...(withSiteIds ? ['site_id'] : []),
    'environment',
    'env_id',
    'version',
    'update',
    'update_vulnerable',
    'safe_update',
    ...(withAges ? ['first_seen', 'eligible'] : []),
  ];
  const rows = exposure.items.flatMap((t) =>
    t.environments.map((e) => [
      itemOf(t)!.kind,
      itemOf(t)!.name,
      e.site,
      ...(withSiteIds ? [e.site_id ?? ''] : []),
      e.environment,
      e.env_id,
      e.version,
      e.update ?? '',
      e.update_vulnerable ? 'yes' : '',
      e.safe_update ? 'yes' : 'no',
      ...(withAges ? ageCells(e.release_age) : []),
    ]),
  );
  if (format === 'csv') return [header, ...rows].map((r) => r.map(forCsv).join(',')).join('\n');
  const unchecked = (exposure.unchecked ?? []).map((u) => `\n${KIND_TABLE[u.kind].plural} not checked: ${terminalMessage(u.why)}`).join('');
  const fixable = exposure.fixable_environments;
  const counts = `${exposure.installs} vulnerable installs of ${itemCounts(exposure)} on ${exposure.environments} environments; ${fixable} ${fixable === 1 ? 'environment has' : 'environments have'} a safe update available`;
  const said = rows.length === 0 ? 'no environment runs a theme or plugin version flagged vulnerable' : `${table(header, rows)}\n\n${counts}`;
  return `${said}${unchecked}`;
}

/** `2 themes and 5 plugins`: the vulnerable items by kind, a kind with none left out. */
function itemCounts(exposure: Exposure): string {
  const parts = KINDS.flatMap((kind) => {
    const n = exposure.items.filter((t) => itemOf(t)!.kind === kind).length;
    // WordPress, one item: its installs are those an x.y release behind the newest.
    if (KIND_TABLE[kind].only !== undefined) return n > 0 ? [`WordPress (an x.y release behind)`] : [];
    return n > 0 ? [`${n} ${n === 1 ? kind : KIND_TABLE[kind].plural}`] : [];
  });
  return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)!}` : parts.join('');
}

/** First seen, and `yes`, `yes (security_bypass)` or the date a held update becomes eligible and why. */
function ageCells(age: UpdateAge | null | undefined): string[] {
  if (!age) return ['', ''];
  const code = age.code ? ` (${age.code})` : '';
  return [age.first_seen, age.eligible ? `yes${code}` : `${age.eligible_at}${code}`];
}
