import type { Action } from '../actions/action.js';
import { ACTIONS } from '../actions/index.js';
import { ENDPOINTS } from '../api/endpoints.js';

/** What a task of each scope targets, in the table's words. */
const TARGETS: Record<Action['scope'], string> = {
  environment: 'each selected environment',
  domain: 'each domain of the selected environments',
  site: 'each site of the selected environments (a `target`), or `with.site_id` once',
  once: 'once (no `target`: ids come from `with`)',
};

/** A `with:` block's fields, required ones in bold, from the action's schema. */
function fields(action: Action): string {
  const schema = action.withSchema as { properties?: Record<string, unknown>; required?: string[] };
  const required = new Set(schema.required ?? []);
  const names = Object.keys(schema.properties ?? {});
  return names.length ? names.map((n) => (required.has(n) ? `**\`${n}\`**` : `\`${n}\``)).join(', ') : '-';
}

/**
 * The playbook actions as a Markdown table, from the registry itself: docs/playbooks.md holds it
 * between markers (scripts/write-docs.mjs writes it; test/docs.test.ts keeps it in step).
 */
export function actionTable(actions: Iterable<Action> = ACTIONS.values()): string {
  const rows = [...actions].map((a) => {
    const { method, path } = ENDPOINTS[a.endpoint];
    const summary = a.summary.replace(/\s*\((GET|POST|PUT) [^)]*\)/, '');
    return `| \`${a.name}\` | ${summary} | \`${method} ${path}\` | ${TARGETS[a.scope]} | ${a.creates ? 'yes' : 'no'} | ${fields(a)} |`;
  });
  return ['| action | what it does | call | one call for | creates | `with:` (required in bold) |', '| --- | --- | --- | --- | --- | --- |', ...rows].join(
    '\n',
  );
}

export const ACTION_TABLE_MARKERS = ['<!-- actions:begin (written by npm run docs) -->', '<!-- actions:end -->'] as const;

/** `page` with the table between its markers replaced by `table`. */
export function withActionTable(page: string, table = actionTable()): string {
  const [begin, end] = ACTION_TABLE_MARKERS;
  const from = page.indexOf(begin);
  const to = page.indexOf(end);
  if (from === -1 || to < from) throw new Error(`the page has no ${begin} … ${end} markers`);
  return `${page.slice(0, from + begin.length)}\n\n${table}\n\n${page.slice(to)}`;
}
