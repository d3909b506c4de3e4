import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Data flows one way (docs/development.md, "The layers"): each folder of src/ may import from the folders before
 * it in this list, never from one after it; `(root)` is src/errors.ts. The simulator sits beside the
 * client: it may use what the client uses, and nothing below the CLI uses it.
 */
const LAYERS = ['(root)', 'util', 'api', 'health', 'sim', 'inventory', 'actions', 'playbook', 'plan', 'coord', 'run', 'report', 'notify', 'app', 'cli'];
const SRC = fileURLToPath(new URL('../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every relative import of every file (static, type-only and dynamic alike), as source paths. */
function importGraph(): Map<string, string[]> {
  const files = sources(SRC);
  return new Map(
    files.map((file) => {
      const text = readFileSync(file, 'utf8');
      const targets = [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.[^']+)'/g)].map((m) => resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
      return [relative(SRC, file), [...new Set(targets)].filter((t) => files.includes(t)).map((t) => relative(SRC, t))];
    }),
  );
}

const layerOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : '(root)');

/** Files that import each other, directly or round a longer circle (Tarjan's strongly connected components). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do component.push((w = stack.pop()!));
      while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the shape of src/', () => {
  const graph = importGraph();

  it('every folder is a known layer', () => {
    expect([...new Set([...graph.keys()].map(layerOf))].filter((l) => !LAYERS.includes(l))).toEqual([]);
  });

  it('no import runs back up a layer', () => {
    const up = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => LAYERS.indexOf(layerOf(t)) > LAYERS.indexOf(layerOf(file))).map((t) => `${file} -> ${t}`),
    );
    expect(up).toEqual([]);
  });

  // The stores (coord/) keep what the planner reads, and hold no judgement of their own: what both share
  // (the staging table, first sightings) sits below both, so the stores never depend on how a plan is made.
  it('coord imports nothing from plan', () => {
    const fromPlan = [...graph].flatMap(([file, targets]) =>
      layerOf(file) === 'coord' ? targets.filter((t) => layerOf(t) === 'plan').map((t) => `${file} -> ${t}`) : [],
    );
    expect(fromPlan).toEqual([]);
  });

  it('no two files import each other, however roundabout', () => {
    expect(circles(graph)).toEqual([]);
  });
});
