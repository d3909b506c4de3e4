import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { fourPlugins } from '../helpers/isolate.js';
import { useReceiver } from '../helpers/receiver.js';
import { HEX, madeUp, secretParts, TOKEN_SHAPES } from '../helpers/secret-shapes.js';
import { useSimulator } from '../helpers/sim.js';

/**
 * A night whose broken site's error log quotes secrets in the fatal error line that names the
 * culprit: the run isolates the culprit by that line, and no part of any secret reaches a file the
 * run writes (report, page, Markdown, JUnit, log file, journal, quarantine), the webhooks' and Slack's
 * bodies, the terminal, `quarantine list` or the monthly record.
 */
const start = useSimulator();
const receive = useReceiver();

const token = (id: string) => TOKEN_SHAPES.find((t) => t.id === id)!;
const webhook = token('webhook path');
/** The secrets the line quotes, each made at run time, and the text that quotes them. */
const SECRETS = {
  aws: madeUp(40, 21),
  password: `${madeUp(10, 22)} ${madeUp(8, 23)}`,
  pdo: `${madeUp(12, 24)}!`,
  cookie: madeUp(24, 25),
  jwt: token('jwt').token(26),
  pat: token('github-fine-grained-pat').token(27),
  openai: token('openai-api-key (project)').token(28),
  hook: webhook.token(29),
};
const QUOTED = [
  `aws_secret_access_key=${SECRETS.aws}`,
  `password='${SECRETS.password}'`,
  `PDO->__construct('mysql:host=db;dbname=wp', 'root', '${SECRETS.pdo}')`,
  `Cookie: ${['wordpress', 'logged', 'in', madeUp(32, 30, HEX)].join('_')}=${SECRETS.cookie}`,
  `session ${SECRETS.jwt}`,
  `git ${SECRETS.pat}`,
  `key ${SECRETS.openai}`,
  webhook.text!(SECRETS.hook),
].join('; ');

const PLAYBOOK = (siteUrl: string) => `version: 1
name: isolate
settings:
  rate_limit: 50/s
  notify:
    - { url: "\${HOOK_JSON}", on: always }
    - { url: "\${HOOK_SLACK}", on: always, format: slack }
tasks:
  - name: plugin updates
    action: plugins.update
    target: { environment: live }
    backup_first: true
    health: { url: "${siteUrl}", attempts: 2, interval: 50ms, on_broken: isolate }
    max_failures: 100
`;

/** Every file under `dir`, with its text. */
function filesUnder(dir: string): [string, string][] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => [path, readFileSync(path, 'utf8')]);
}

describe('secrets in the error line that names the culprit', () => {
  it('isolate the culprit by it, and reach no output of the run', async () => {
    const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 20, createRate: '100/s', operationVisibleAfterMs: 0 });
    fourPlugins(sim);
    // The site's log quotes the secrets in the fatal error line PHP writes for p0 (and in every read of it).
    const tail = sim.logs.tail.bind(sim.logs);
    sim.logs.tail = (envId, file, lines) =>
      tail(envId, file, lines).replace(/Uncaught Error: (Call to undefined function p0_init)/g, `Uncaught Error: ${QUOTED}; $1`);
    const receiver = await receive();
    const state = simEnv(sim);
    const env = { ...state, HOOK_JSON: `${receiver.url}/hook/json`, HOOK_SLACK: `${receiver.url}/hook/slack` };
    const dir = tempDir();
    const out = (name: string) => join(dir, name);
    const args = ['--report', out('r.json'), '--html', out('run.html'), '--summary-md', out('s.md'), '--junit', out('j.xml'), '--log-file', out('run.log')];
    const run = await runCli(['run', writePlaybook(PLAYBOOK(sim.siteUrl), dir), '--yes', '--poll-interval', '50', ...args], env);
    expect(run.code, run.stdout + run.stderr).toBe(1);

    // The line was read, named the culprit, and is kept masked.
    const report = JSON.parse(readFileSync(out('r.json'), 'utf8')) as Report;
    const write = report.results.find((r) => r.request?.method === 'PUT')!;
    expect(write.isolation).toMatchObject({ outcome: 'found', suspect: { plugin: 'p0' }, culprits: [{ plugin: 'p0' }] });
    expect(write.logged).toMatchObject({ plugin: 'p0' });
    expect(write.logged!.line).toContain("password='[masked]'; PDO->__construct('mysql:host=db;dbname=wp', 'root', '[masked]')");
    expect(write.logged!.line).toMatch(/Call to undefined function p0_init\(\) in \/www\/\S+\/wp-content\/plugins\/p0\/p0\.php:123$/);

    const listed = await runCli(['quarantine', 'list'], env);
    const record = await runCli(['report', '--from', dir, '--html', out('record.html')], env);
    expect(record.code, record.stderr).toBe(0);
    expect(listed.stdout).toContain('[masked]');
    const seen: [string, string][] = [
      ...filesUnder(dir),
      ...filesUnder(state.SITEFLEET_STATE_DIR!),
      ...receiver.requests.map((r): [string, string] => [r.path, r.body]),
      ...[run, listed, record].map((r, i): [string, string] => [`terminal ${i}`, r.stdout + r.stderr]),
    ];
    // Where the line goes, it went: the report, the page, Markdown, JUnit, the quarantine, both posts.
    for (const where of ['r.json', 'run.html', 's.md', 'j.xml', 'record.html', '/hook/json', '/hook/slack'])
      expect(seen.find(([path]) => path.endsWith(where))?.[1], where).toContain('masked');
    expect(seen.some(([path, text]) => path.startsWith(state.SITEFLEET_STATE_DIR!) && text.includes('[masked]'))).toBe(true);
    for (const [label, secret] of Object.entries(SECRETS))
      for (const part of secretParts(secret, QUOTED.replace(secret, '')))
        for (const [path, text] of seen) expect(text.includes(part), `${label} (${part}) in ${path}`).toBe(false);
  });
});
