import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readsOf, type Action } from '../../src/actions/action.js';
import { ACTIONS } from '../../src/actions/index.js';
import { creates, ENDPOINTS } from '../../src/api/endpoints.js';
import { bodyProblems } from '../../src/api/request-schemas.js';
import { assertBodiesValid } from '../../src/app/load-playbook.js';
import { standInExpansions } from '../../src/plan/offline-check.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { createAjv } from '../../src/util/ajv.js';

/**
 * Every registered action keeps the contract the planner, the run and the commands rely on, as
 * renovate's manager spec holds every manager: a new action that breaks it fails here, by name.
 */
const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const SITE_ID = '0f1e2d3c-4b5a-4697-8877-665544332299';
const DATE = '2026-11-22';
const all = [...ACTIONS.values()];

function playbookWith(action: Action, targeted: boolean): string {
  const w = { ...(action.example as Record<string, unknown>) };
  if (targeted) delete w.site_id;
  const target = targeted ? '    target: all\n' : '';
  return `version: 1\nname: conformance\ncompany: ${COMPANY}\nsites: { example-site: ${SITE_ID} }\ntasks:\n  - name: t\n    action: ${action.name}\n${target}    with: ${JSON.stringify(w)}\n`;
}

describe.each(all.map((a) => [a.name, a] as const))('action %s', (name, action) => {
  it('is registered under its name, says what it calls, and the endpoint exists', () => {
    expect(ACTIONS.get(name)).toBe(action);
    expect(name).toMatch(/^[a-z_]+\.[a-z_]+$/);
    expect(action.summary.length).toBeGreaterThan(10);
    expect(ENDPOINTS[action.endpoint]).toBeDefined();
  });

  it('never marks as safe to repeat a call the API list says creates something (except a known answer to a repeat)', () => {
    // A push sets the target to the source again; a second admin user is refused with create_wp_admin_user: false.
    if (creates(action.endpoint)) expect(action.creates || action.name === 'environments.push').toBe(true);
  });

  it('has a strict with: schema that its example satisfies', () => {
    const validate = createAjv().compile(action.withSchema);
    expect((action.withSchema as { additionalProperties?: unknown }).additionalProperties).toBe(false);
    expect(validate(action.example), JSON.stringify(validate.errors)).toBe(true);
    for (const secret of action.secretFields ?? []) expect((action.withSchema as { properties: Record<string, unknown> }).properties[secret]).toBeDefined();
  });

  it('expands its example into calls of its endpoint whose bodies the API schema accepts', () => {
    const forms = action.scope === 'site' ? [false, true] : [action.scope !== 'once'];
    for (const targeted of forms) {
      const w = { ...(action.example as Record<string, unknown>) };
      if (targeted) delete w.site_id;
      const secrets = Object.fromEntries((action.secretFields ?? []).filter((f) => f in w).map((f) => [f, 'a-secret-value-long-enough']));
      const requests = standInExpansions(action, { ...w, ...secrets }, targeted, DATE).flatMap((e) => ('request' in e ? [e.request] : []));
      expect(requests.length, `${name} ${targeted ? 'with' : 'without'} a target`).toBeGreaterThan(0);
      for (const request of requests) {
        expect([action.endpoint, ...(action.alsoSends ?? [])]).toContain(request.endpoint);
        const endpoint = ENDPOINTS[request.endpoint];
        for (const param of endpoint.path.match(/\{(\w+)\}/g) ?? []) expect(request.params[param.slice(1, -1)], param).toBeTruthy();
        if ('body' in endpoint) expect(bodyProblems(endpoint.body, request.body)).toEqual([]);
      }
    }
  });

  it('is valid in a playbook, with its target rule (and passes the offline body check)', () => {
    const forms = action.scope === 'site' ? [false, true] : [action.scope !== 'once'];
    for (const targeted of forms) {
      const playbook = parsePlaybook(playbookWith(action, targeted), 'pb.yaml', { env: { ADMIN_PASSWORD: 'a-secret-value-long-enough' }, requireEnv: true });
      expect(() => assertBodiesValid(playbook, DATE)).not.toThrow();
      expect(readsOf(action, playbook.tasks[0]!.with).every((r) => r === 'domains' || r === 'backups')).toBe(true);
    }
    // The other form is refused: a target where the action acts once, none where it needs one.
    if (action.scope === 'once' || action.scope === 'environment' || action.scope === 'domain') {
      expect(() => parsePlaybook(playbookWith(action, action.scope === 'once'), 'pb.yaml', { env: {}, requireEnv: false })).toThrow(/target/);
    }
  });

  it('keeps outputs only where it writes them, and reads answers without throwing', () => {
    // An output kept from an answer must have a private file to go to, or it would be lost.
    if (action.readAnswer) {
      for (const data of [undefined, null, {}, { message: 'ok' }, 'text', 42]) expect(() => action.readAnswer!(data)).not.toThrow();
      const outputs = [{}, { login_link: 'https://example.org/x' }, { create_wp_admin_user: false }].map((d) => action.readAnswer?.(d).output);
      if (outputs.some((o) => o !== undefined)) expect(action.privateOutput !== undefined).toBe(true);
    }
    for (const data of [undefined, null, {}, { message: 'ok' }, 'text', 42, [1], { idEnv: 7 }, { result: { deep: true } }])
      expect(() => action.readOperation?.(data)).not.toThrow();
    if (action.privateOutput) {
      const written = action.privateOutput(action.example, [
        { target: { env_id: 'e', site: 's', environment: 'live' }, status: 'succeeded', private_output: { login_link: 'https://example.org/x' }, output: 'x' },
      ]);
      expect(written?.what.length).toBeGreaterThan(0);
      expect(action.privateOutput(action.example, [{ target: { env_id: 'e' } }])).toBeUndefined();
      // The run checks before sending the file the output will go to: it must be the one written.
      const file = action.privateFile?.(action.example);
      expect(file?.file).toBe(written?.file);
      expect((action.example as Record<string, unknown>)[file!.field]).toBe(written?.file);
    }
    expect(action.privateFile === undefined).toBe(action.privateOutput === undefined);
  });
});

describe('action knowledge stays in src/actions/', () => {
  const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

  it('no file outside src/actions/ (and the simulator, which plays the service) names an action', () => {
    const names = all.map((a) => a.name);
    const naming = files(SRC)
      .map((f) => relative(SRC, f))
      .filter((f) => !f.startsWith('actions/') && !f.startsWith('sim/'))
      .filter((f) => {
        const text = readFileSync(join(SRC, f), 'utf8');
        return names.some((n) => text.includes(`'${n}'`) || text.includes(`"${n}"`) || text.includes(`\`${n}\``) || text.includes(`${n}:`));
      });
    expect(naming).toEqual([]);
  });

  it('every verify-able, answer-reading or output-writing action is one the hooks name, not a list elsewhere', () => {
    expect(all.filter((a) => a.verify !== undefined).map((a) => a.name)).toEqual(['themes.update', 'plugins.update', 'core.update']);
    expect(all.filter((a) => a.privateOutput !== undefined).map((a) => a.name)).toEqual(['wp_cli.run', 'admin_users.login_link']);
    expect(all.filter((a) => a.readOperation !== undefined).map((a) => a.name)).toEqual([
      'wp_cli.run',
      'environments.create',
      'environments.create_plain',
      'environments.clone',
      'sites.create_plain',
    ]);
    expect(all.filter((a) => a.reads !== undefined).map((a) => a.name)).toEqual(['themes.update', 'plugins.update', 'core.update', 'backups.create']);
    expect(all.filter((a) => a.confirmBatch !== undefined).map((a) => a.name)).toEqual(['themes.update']);
    expect(all.filter((a) => a.scope === 'environment' && a.readOnly).map((a) => a.name)).toEqual(['admin_users.login_link']);
  });

  it('a batch confirmation never confirms a step whose environment the listing does not show', () => {
    const empty = { company: 'c', environments: [], listed: {}, last_updated_at: '2026-11-22T00:00:00.000Z' };
    for (const action of all.filter((a) => a.confirmBatch)) {
      const requests = standInExpansions(action, action.example as never, true, DATE).flatMap((e) => ('request' in e ? [e.request] : []));
      expect(requests.length).toBeGreaterThan(0);
      for (const request of requests) {
        const step = { target: { env_id: request.params.env_id ?? 'e' }, body: request.body };
        expect(action.confirmBatch!.shows(step, empty)).toBe(false);
        expect(Array.isArray(action.confirmBatch!.searches([step]))).toBe(true);
      }
    }
  });
});
