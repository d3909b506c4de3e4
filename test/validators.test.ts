import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { schemasSha256, validatedSchemas } from '../src/app/validator-schemas.js';
import { createAjv } from '../src/util/ajv.js';
import { builtValidator, type BuiltIndex } from '../src/util/validators.js';
import { PLAYBOOKS } from './helpers/cli.js';

const BUILT = new URL('../dist/generated/validators/', import.meta.url);
const builtIndex = () => JSON.parse(readFileSync(new URL('index.json', BUILT), 'utf8')) as BuiltIndex;

/** The example playbooks, and each broken in the ways people break them. */
function playbookCases(): unknown[] {
  const examples = readdirSync(PLAYBOOKS)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => parse(readFileSync(`${PLAYBOOKS}${f}`, 'utf8')) as Record<string, unknown>);
  const broken = examples.flatMap((pb) => {
    const tasks = pb.tasks as Record<string, unknown>[];
    return [
      { ...pb, tasks: tasks.map((t) => ({ ...t, timeout: '99999h' })) },
      { ...pb, tasks: tasks.map((t) => ({ ...t, with: { ...(t.with as object), nonsense: 1 } })) },
      { ...pb, tasks: tasks.map((t) => ({ ...t, action: 'themes.explode' })) },
      { ...pb, company: 'not-a-uuid', settings: { rate_limit: 'fast', window: { start: '25:00' } } },
      { ...pb, version: 2, tasks: [] },
    ];
  });
  return [...examples, ...broken, { tasks: [{ action: 'denied_ips.set', with: { ip_list: ['10.0.0.0/33', 'x'] } }] }];
}

describe('the validators built with the CLI', () => {
  it('were made from the schemas as they are now (else: npm run build)', async () => {
    const { schemas_sha256, validators } = builtIndex();
    expect(schemas_sha256, 'dist/generated/validators/ is older than the schemas: run `npm run build`').toBe(schemasSha256());
    const names = validatedSchemas().map((s) => s.name);
    expect(validators).toEqual(expect.arrayContaining(names));
    for (const name of names) expect(builtValidator(name, BUILT), name).toBeTypeOf('function');
  });

  it('answer every input as the schemas compiled at run time do, error for error', async () => {
    const ajv = createAjv();
    const schemas = validatedSchemas();
    for (const { id, schema } of schemas) ajv.addSchema(schema, schema.$id === id ? undefined : id);
    const bodies: [string, unknown][] = [
      ['api/add-domain', { domain: 'exa mple', redirect: 3 }],
      ['api/create-dns-record', { type: 'MX', ttl: 10 }],
      ['report.schema.json', { version: 1, results: [{ status: 'exploded' }] }],
      ['plan.schema.json', { steps: 'none' }],
    ];
    const cases: [string, unknown][] = [...playbookCases().map((c) => ['playbook', c] as [string, unknown]), ...bodies];
    for (const [name, data] of cases) {
      const id = schemas.find((s) => s.name === name)!.id;
      const here = ajv.getSchema(id)!;
      const there = builtValidator(name, BUILT)!;
      expect(there(data), name).toBe(here(data));
      expect(there.errors, name).toEqual(here.errors);
    }
  });
});
