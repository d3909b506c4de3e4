import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { HostingClient } from '../../src/api/client.js';
import { AbortedError, AuthenticationError, MalformedResponseError, ServerError } from '../../src/errors.js';
import { KIND_TABLE } from '../../src/inventory/kinds.js';
import { Caller, type CallPort } from '../../src/run/caller.js';
import { DEFAULT_LOG_LINES, ErrorLogLooks, loggedCulprit, newFatal, readErrorLog } from '../../src/run/error-log.js';
import { PRIORITY, RateBudget } from '../../src/run/rate-budget.js';
import { silent } from '../helpers/run.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();
const ENV = '00000000-0000-4000-8000-000000000001';

/** A port whose one read answers `answer`, and that keeps what it was asked. */
function reading(answer: () => Promise<unknown>) {
  const asked: unknown[][] = [];
  const port = { read: (...args: unknown[]) => (asked.push(args), answer()) } as unknown as CallPort;
  return { port, asked };
}

describe('readErrorLog: the PHP error log of an environment, through the caller', () => {
  it('against the simulator: empty before, the plugin that broke the page named after, in one read each', async () => {
    const { sim, client } = await start({ seed: 21, sites: 8, pageCacheTtlMs: 0 });
    const env = [...sim.fleet.environments.values()].find((e) => [...e.plugins.values()].some((p) => p.status === 'active'))!;
    const [slug, plugin] = [...env.plugins].find(([, p]) => p.status === 'active')!;
    const logs = new RateBudget(35, 60_000);
    const caller = new Caller(client, { logs, logger: silent });
    try {
      const before = await readErrorLog(caller, env.id, { when: 'before' });
      expect(before).toEqual({ ok: true, text: '' });
      sim.breakPlugin(`${slug}@${plugin.version}`);
      const page = await request(sim.siteUrl.replace('{{domain}}', env.domains[0]!.name));
      await page.body.dump();
      expect(page.statusCode).toBe(500);
      const after = await readErrorLog(caller, env.id, { when: 'after', lines: 50 });
      expect(after.ok).toBe(true);
      const found = newFatal(before.ok ? before.text : undefined, after.ok ? after.text : '', [KIND_TABLE.plugin, KIND_TABLE.theme]);
      expect(found).toMatchObject({ plugin: slug, line: expect.stringContaining(`/public/wp-content/plugins/${slug}/`) });
      // The lines asked for are the lines given (the simulator refuses a read without them).
      const tail = await readErrorLog(caller, env.id, { when: 'after', lines: 2 });
      expect(tail.ok && tail.text.split('\n')).toEqual(after.ok && after.text.split('\n').slice(-2));
      expect(sim.log.filter((e) => e.endpoint === 'getLogs').map((e) => e.status)).toEqual([200, 200, 200]);
    } finally {
      logs.dispose();
    }
  });

  it('the simulator’s fatal lines for a broken theme and a broken WordPress release name the theme and core', async () => {
    const { sim, client } = await start({ seed: 5, sites: 6, pageCacheTtlMs: 0 });
    const envs = [...sim.fleet.environments.values()];
    const coreEnv = envs.find((e) => e.wordpressVersion !== null);
    // On another release, so that only its theme breaks it.
    const themeEnv = envs.find((e) => e.wordpressVersion !== coreEnv!.wordpressVersion);
    const [theme, installed] = [...themeEnv!.themes][0]!;
    sim.breakTheme(`${theme}@${installed.version}`);
    sim.breakCore(coreEnv!.wordpressVersion!);
    const caller = new Caller(client, { logger: silent });
    for (const [env, named] of [
      [themeEnv!, { theme }],
      [coreEnv!, { core: 'wordpress' }],
    ] as const) {
      const page = await request(sim.siteUrl.replace('{{domain}}', env.domains[0]!.name));
      await page.body.dump();
      expect(page.statusCode).toBe(500);
      const after = await readErrorLog(caller, env.id, { when: 'after' });
      expect(newFatal('', after.ok ? after.text : '', Object.values(KIND_TABLE))).toMatchObject(named);
    }
  });

  it('a 401 is a stop the caller acts on, as for every other read', async () => {
    const { sim } = await start({ sites: 1 });
    const client = new HostingClient({ baseUrl: sim.baseUrl, token: 'not-the-token' });
    try {
      const read = await readErrorLog(new Caller(client, { logger: silent }), ENV, { when: 'after' });
      expect(read).toMatchObject({ ok: false, stop: { kind: 'auth', reason: expect.stringContaining('401') } });
    } finally {
      await client.close();
    }
  });

  it('an odd answer, a 5xx, a malformed body or the run stopping: could not read, never a throw', async () => {
    const odd = [null, {}, { environment: null }, { environment: { container_info: {} } }, { environment: { container_info: { logs: 5 } } }];
    for (const answer of odd) {
      const read = await readErrorLog(reading(() => Promise.resolve(answer)).port, ENV, { when: 'after' });
      expect(read, JSON.stringify(answer)).toEqual({ ok: false, reason: 'could not read the error log: the answer holds no log text' });
    }
    const errors = [
      new ServerError(503, 'GET', '/logs', 'down'),
      new MalformedResponseError(200, 'GET', '/logs', 'not JSON'),
      new AbortedError('run interrupted'),
    ];
    for (const error of errors) {
      const read = await readErrorLog(reading(() => Promise.reject(error)).port, ENV, { when: 'before' });
      expect(read).toMatchObject({ ok: false, reason: expect.stringContaining(error.message) });
      expect(read).not.toHaveProperty('stop');
    }
    // A defect (no answer of the service) is not hidden.
    await expect(readErrorLog(reading(() => Promise.reject(new TypeError('bug'))).port, ENV, { when: 'before' })).rejects.toThrow('bug');
  });

  it('loggedCulprit: the item of the first fatal line new since the read before; nothing when the log cannot be read; a 401 a stop', async () => {
    const line = 'PHP Fatal error:  Uncaught Error: x in /www/a_1/public/wp-content/plugins/forms/forms.php:7';
    const old = 'PHP Fatal error:  Uncaught Error: y in /www/a_1/public/wp-content/plugins/old/old.php:7';
    const answering = (logs: string) => reading(() => Promise.resolve({ environment: { container_info: { logs } } })).port;
    const kinds = [KIND_TABLE.plugin];
    expect(await loggedCulprit(answering(`${old}\n${line}`), ENV, { ok: true, text: old }, kinds)).toEqual({ logged: { plugin: 'forms', line } });
    expect(await loggedCulprit(answering(old), ENV, { ok: true, text: old }, kinds)).toEqual({});
    // Without the read before, the newest fatal line.
    expect(await loggedCulprit(answering(`${old}\n${line}`), ENV, { ok: false, reason: 'x' }, kinds)).toEqual({ logged: { plugin: 'forms', line } });
    const failing = (error: Error) => reading(() => Promise.reject(error)).port;
    expect(await loggedCulprit(failing(new ServerError(502, 'GET', '/logs', 'bad gateway')), ENV, undefined, kinds)).toEqual({});
    expect(await loggedCulprit(failing(new AuthenticationError(401, 'GET', '/logs', 'Unauthenticated.')), ENV, undefined, kinds)).toMatchObject({
      stop: { kind: 'auth' },
    });
  });

  it('ErrorLogLooks: each look after a failed check names what is new since the look before; a 401 calls stop', async () => {
    const fatal = (slug: string, at: string) => `[25-Nov-2026 ${at} UTC] PHP Fatal error:  x in /www/a_1/public/wp-content/plugins/${slug}/${slug}.php:7`;
    const logs = [
      fatal('old', '01:00:00'),
      [fatal('old', '01:00:00'), fatal('forms', '02:00:00')],
      [fatal('old', '01:00:00'), fatal('forms', '02:00:00'), fatal('forms', '02:00:09'), fatal('seo', '02:00:10')],
      [fatal('old', '01:00:00'), fatal('forms', '02:00:00')],
    ].map((l) => [l].flat().join('\n'));
    const answers: (() => Promise<unknown>)[] = logs.map((text) => () => Promise.resolve({ environment: { container_info: { logs: text } } }));
    answers.push(() => Promise.reject(new AuthenticationError(401, 'GET', '/logs', 'Unauthenticated.')));
    const port = { read: () => answers.shift()!() } as unknown as CallPort;
    const stops: string[] = [];
    const looks = new ErrorLogLooks(port, ENV, [KIND_TABLE.plugin], { stop: (_reason, kind) => stops.push(kind) });
    await looks.before();
    expect(await looks.after()).toMatchObject({ plugin: 'forms' });
    // The second round broke it again: the first line new since the first look.
    expect(await looks.after()).toMatchObject({ plugin: 'forms', line: fatal('forms', '02:00:09') });
    expect(await looks.after()).toBeUndefined();
    expect(stops).toEqual([]);
    expect(await looks.after()).toBeUndefined();
    expect(stops).toEqual(['auth']);
  });

  it('the read before a write waits behind writes; the one after a failed check goes first; lines kept from 1 to 20000', async () => {
    const { port, asked } = reading(() => Promise.resolve({ environment: { container_info: { logs: 'x' } } }));
    await readErrorLog(port, ENV, { when: 'before' });
    await readErrorLog(port, ENV, { when: 'after', lines: 50_000 });
    await readErrorLog(port, ENV, { when: 'after', lines: 0 });
    expect(asked).toEqual([
      ['getLogs', { env_id: ENV }, undefined, { query: { file_name: 'error', lines: DEFAULT_LOG_LINES }, priority: PRIORITY.poll }],
      ['getLogs', { env_id: ENV }, undefined, { query: { file_name: 'error', lines: 20_000 }, priority: PRIORITY.urgent }],
      ['getLogs', { env_id: ENV }, undefined, { query: { file_name: 'error', lines: 1 }, priority: PRIORITY.urgent }],
    ]);
  });
});
