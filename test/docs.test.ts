import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { actionTable, withActionTable } from '../src/cli/action-table.js';
import { ACTIONS } from '../src/actions/index.js';
import { DEFAULT_OPERATION_PATH, ENDPOINTS } from '../src/api/endpoints.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');

/** Markdown as prettier may lay it out: runs of spaces and table rulers do not count. */
const loose = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim().replace(/ {2,}/g, ' ').replace(/-{3,}/g, '---'))
    .join('\n');

/** GitHub's anchor for a heading. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

describe('the docs', () => {
  it('docs/playbooks.md holds the action table the registry makes (else: npm run docs)', () => {
    const page = read('docs/playbooks.md');
    expect(loose(page), 'the action table is out of step with src/actions: run `npm run docs`').toBe(loose(withActionTable(page)));
    for (const name of ACTIONS.keys()) expect(actionTable()).toContain(`\`${name}\``);
  });

  it('every API call the docs name (`POST /sites/…`) is one the spec has, as the action table says it', () => {
    // Placeholder names and query strings aside: `{env_id}` and `{id}` are one segment.
    const shape = (path: string) =>
      path
        .split('?')[0]!
        .replace(/\{[^}]*\}/g, '{}')
        .replace(/\/$/, '');
    const known = new Set([...Object.values(ENDPOINTS), { method: 'GET', path: DEFAULT_OPERATION_PATH }].map((e) => `${e.method} ${shape(e.path)}`));
    // The simulator's site pages (`GET /sites/{domain}/`) are a site's, not the API's; simulator.md
    // names `GET /sites/{site_id}/environments` as a call it does not serve.
    const notApi = new Set(['GET /sites/{}', 'GET /sites/{}/environments']);
    const named = PAGES.flatMap((page) =>
      [
        ...read(page)
          .replace(/\s+/g, ' ')
          .matchAll(/`(GET|POST|PUT|DELETE|PATCH) (\/[^` ]*)/g),
      ].map((m) => ({ page, call: `${m[1]} ${shape(m[2]!)}` })),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((n) => !known.has(n.call) && !notApi.has(n.call))).toEqual([]);
  });

  it('every relative link of README.md and docs/ reaches a file, and its #anchor a heading there', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, anchor] = target!.split('#');
        const path = file ? resolve(dirname(join(ROOT, page)), file) : join(ROOT, page);
        if (!existsSync(path)) broken.push(`${page}: ${target}`);
        else if (anchor && path.endsWith('.md')) {
          const headings = [...readFileSync(path, 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!));
          if (!headings.includes(anchor)) broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README stays an entry: what a newcomer needs, and where to read on', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThan(250);
    for (const page of PAGES.filter((p) => p !== 'README.md')) expect(readme, page).toContain(`](${page})`);
  });
});
