import { parse as parseCsv } from './csv.js';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { InvalidInputError, type InputProblem } from '../errors.js';
import { readInputFile } from '../util/input-file.js';
import { isUuid } from '../util/uuid.js';
import type { Inventory } from './inventory.js';

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
