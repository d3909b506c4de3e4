import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SiteProbe } from '../src/health/http/probe.js';
import { playbookSchema } from '../src/playbook/schema.js';
import { buildReport } from '../src/report/report.js';
import { createAjv } from '../src/util/ajv.js';
import { runInProcess } from './helpers/run.js';
import { useSimulator } from './helpers/sim.js';

const read = (name: string) => JSON.parse(readFileSync(new URL(`../schemas/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;
const start = useSimulator();

describe('published schemas', () => {
  it('every schema of the project is valid against the draft 2020-12 meta-schema (the CLI skips that check at start-up)', () => {
    const ajv = createAjv();
    const dir = new URL('../schemas/', import.meta.url);
    const files = [...readdirSync(dir), ...readdirSync(new URL('api/', dir)).map((f) => `api/${f}`)].filter((f) => f.endsWith('.schema.json'));
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) expect(ajv.validateSchema(read(file)), `${file}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
  });

  it('schemas/playbook.schema.json is what the actions assemble (run `npm run schemas` after changing an action)', () => {
    expect(read('playbook.schema.json')).toEqual(JSON.parse(JSON.stringify(playbookSchema())));
  });

  it('a plan and its reports (dry-run and run) validate against plan.schema.json and report.schema.json', async () => {
    const { sim } = await start({ operationDelayMs: 0 });
    const probe = new SiteProbe({ userAgent: 'test', env: {} });
    onTestFinished(() => probe.close());
    const ajv = createAjv();
    ajv.addSchema(read('records.schema.json'));
    const validatePlan = ajv.compile(read('plan.schema.json'));
    const validateReport = ajv.compile(read('report.schema.json'));
    const { plan, results } = await runInProcess(
      sim,
      'tasks:\n  - { name: t, action: themes.update, target: all, verify: true, timeout: 1m }\n  - { name: b, action: backups.create, target: all, rollout: { canary: 1, waves: ["100%"], pause: 10ms }, with: { tag: x } }\n' +
        `  - { name: p, action: php.set_version, target: all, with: { php_version: "8.3" }, backup_first: true, health: { url: "${sim.siteUrl}" } }\n`,
      { tracking: { intervalMs: 10, maxIntervalMs: 20 }, sites: probe },
    );
    expect(results.get(plan.steps.find((s) => s.health)!.id)?.health?.outcome).toBe('healthy');
    expect(validatePlan(plan), JSON.stringify(validatePlan.errors)).toBe(true);
    const now = new Date();
    for (const report of [
      buildReport({ plan, mode: 'dry-run', startedAt: now, finishedAt: now }),
      buildReport({ plan, mode: 'run', startedAt: now, finishedAt: now, results }),
    ]) {
      expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
    }
    // The schema is not a rubber stamp.
    expect(validateReport({ ...buildReport({ plan, mode: 'run', startedAt: now, finishedAt: now, results }), mode: 'live' })).toBe(false);
  });
});

describe('report schema', () => {
  it('describes every field it defines, the shared records it refers to included', () => {
    const missing: string[] = [];
    const records = read('records.schema.json') as { $defs: Record<string, unknown> };
    const walk = (node: unknown, path: string) => {
      if (typeof node !== 'object' || node === null) return;
      const n = node as { properties?: Record<string, { description?: string }>; items?: unknown; allOf?: unknown[]; $ref?: string };
      for (const [key, value] of Object.entries(n.properties ?? {})) {
        if (!value.description) missing.push(`${path}.${key}`);
        walk(value, `${path}.${key}`);
      }
      if (n.items) walk(n.items, `${path}[]`);
      for (const part of n.allOf ?? []) walk(part, path);
      const shared = /^records\.schema\.json#\/\$defs\/(\w+)$/.exec(n.$ref ?? '')?.[1];
      if (shared) walk(records.$defs[shared], path);
    };
    walk(read('report.schema.json'), '');
    expect(missing).toEqual([]);
    // The walk follows the shared records: a result's visual pages are among what it checked.
    expect(JSON.stringify(records.$defs.step_result)).toContain('changed_percent');
  });

  it('the plan, report and journal keep no copy of a shared record: each refers to records.schema.json', () => {
    const text = ['plan.schema.json', 'report.schema.json', 'journal-record.schema.json'].map((f) => JSON.stringify(read(f))).join('\n');
    for (const field of ['"changed_percent"', '"restore_point"', '"operation_data_cut"', '"eligible_at"', '"staging_soaking"'])
      expect(text).not.toContain(field);
    expect(text).toContain('records.schema.json#/$defs/step_result');
  });
});
