import { parse as parseCsv } from './csv.js';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { HttpError, InvalidInputError, type InputProblem } from '../errors.js';
import type { ReadCaller } from './read.js';
import { readInputFile } from '../util/input-file.js';
import { isUuid } from '../util/uuid.js';
import type { Environment, Inventory } from './inventory.js';

/**
 * `--sites FILE`: site display name → site id, as YAML (`acme-shop: 0f1e…`) or CSV (`name,id` a line,
 * an optional header). The theme listing carries no site ids, and every site-scoped call needs one.
 */
export function loadSitesFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readInputFile(path, 4 << 20);
  } catch (error) {
    throw new InvalidInputError([{ file: path, line: 1, column: 1, path: '', message: `cannot read the sites file: ${(error as Error).message}` }]);
  }
  return /\.csv$/i.test(path) ? fromCsv(path, text) : fromYaml(path, text);
}

function fromYaml(file: string, text: string): Record<string, string> {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const at = (offset: number) => ({ file, line: lines.linePos(offset).line, column: lines.linePos(offset).col });
  if (doc.errors.length > 0)
    throw new InvalidInputError([{ ...at(doc.errors[0]!.pos[0]), path: '', message: `not YAML: ${doc.errors[0]!.message.split('\n')[0]}` }]);
  if (!isMap(doc.contents))
    throw new InvalidInputError([
      { file, line: 1, column: 1, path: '', message: 'a sites file maps site names to site ids, e.g. "acme-shop: 0f1e2d3c-…", or is a CSV of name,id' },
    ]);
  const sites: Record<string, string> = {};
  const problems: InputProblem[] = [];
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    const value = isScalar(pair.value) ? String(pair.value.value) : '';
    if (!isUuid(value))
      problems.push({
        ...at(pair.value && isScalar(pair.value) ? (pair.value.range?.[0] ?? 0) : 0),
        // Nothing of the file is quoted, not even the key: the user may have pointed at any file.
        path: '',
        message: 'a sites file maps a site name to a site id (UUID), and this value is not one',
      });
    else sites[key] = value;
  }
  if (problems.length) throw new InvalidInputError(problems.slice(0, 5));
  return sites;
}

function fromCsv(file: string, text: string): Record<string, string> {
  const sites: Record<string, string> = {};
  for (const [i, row] of parseCsv(text).entries()) {
    if (row.length === 0 || (row.length === 1 && row[0] === '')) continue;
    if (i === 0 && row.length === 2 && /^(site|name|site_name|display_name)$/i.test(row[0]!) && /^(id|site_id|uuid)$/i.test(row[1]!)) continue; // a header
    if (row.length !== 2 || !isUuid(row[1]!)) {
      throw new InvalidInputError([{ file, line: i + 1, column: 1, path: '', message: 'a sites CSV line is: site name, site id (UUID)' }]);
    }
    sites[row[0]!] = row[1]!;
  }
  return sites;
}

/** Sets `site_id` on each environment whose site the map names. */
export function attachSiteIds(inventory: Inventory, sites: Record<string, string>): void {
  // Own keys only: a site named `constructor` or `__proto__` must not find a value on Object.prototype.
  for (const env of inventory.environments) if (Object.hasOwn(sites, env.site) && typeof sites[env.site] === 'string') env.site_id = sites[env.site];
}

/**
 * The service's site listing (`GET /sites?company=…&include_environments=true`, beyond the spec): each
 * environment's site id, by environment id. One read. Undefined where the service does not serve it
 * (404): then no site is known by id, and a caller that must tell sites apart says so.
 */
export async function readSiteIds(caller: ReadCaller, company: string): Promise<Map<string, string> | undefined> {
  let answer;
  try {
    answer = await caller.read('listSites', {}, undefined, { query: { company, include_environments: 'true' } });
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) return undefined;
    throw error;
  }
  return new Map(answer.company.sites.flatMap((site) => (site.environments ?? []).map((env) => [env.id, site.id] as const)));
}

/**
 * Sets each listed environment's `site_id` from the site listing: the service's word, over a sites
 * map's by name. An environment the listing does not name (made since it was read, or left out) is
 * known by its site's display name, as without the listing: it takes the id of the one listed site of
 * that name; with none listed, its name alone pairs it. Returns the site names such an environment
 * cannot be told apart by (two sites of that name): a listed live keyed by id would never find an
 * unlisted staging keyed by name, and "no staging" would send its update to live at once.
 */
export function attachListedSiteIds(inventory: Inventory, ids: ReadonlyMap<string, string>): string[] {
  const listed = new Map<string, Set<string>>();
  for (const env of inventory.environments) {
    const id = ids.get(env.id);
    if (id === undefined) continue;
    env.site_id = id;
    listed.set(env.site, (listed.get(env.site) ?? new Set()).add(id));
  }
  const unlisted = inventory.environments.filter((e) => !ids.has(e.id));
  const names = new Set(unlisted.map((e) => e.site));
  const twice = new Set(ambiguousSiteNames(inventory.environments.filter((e) => names.has(e.site))));
  const ambiguous = new Set<string>();
  for (const env of unlisted) {
    const sites = listed.get(env.site);
    if (twice.has(env.site) || (sites && sites.size > 1)) ambiguous.add(env.site);
    else if (sites) env.site_id = [...sites][0];
  }
  return [...ambiguous].sort();
}

/**
 * Site display names that stand for more than one site, as far as the theme listing can tell: two
 * environments of one name under one site name. Without site ids such sites cannot be told apart.
 */
export function ambiguousSiteNames(environments: readonly Environment[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const env of environments) {
    const key = JSON.stringify([env.site, env.name]);
    if (seen.has(key)) twice.add(env.site);
    seen.add(key);
  }
  return [...twice].sort();
}
