import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { pathToFileURL } from 'node:url';
import { CLI, runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useReceiver, type Received } from '../helpers/receiver.js';
import { useSimulator, waitFor } from '../helpers/sim.js';
import type * as Program from '../../src/cli/program.js';
import type * as IoModule from '../../src/app/io.js';

const start = useSimulator();
const receive = useReceiver();

/** The secret parts of the channels' URLs and the signing key: none may show anywhere but on the wire. */
const SECRETS = ['ping-9f2c41', 'hook-json-77aa', 'hook-slack-88bb', 'signing-key-x1'];

const PLAYBOOK = (notify: string) =>
  `version: 1\nname: nightly\nsettings:\n  ping: "\${HC_URL}"\n  notify:\n${notify}tasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: n } }\n`;
const BOTH = '    - { url: "${HOOK_JSON}", on: always, secret: "${HOOK_SECRET}" }\n    - { url: "${HOOK_SLACK}", on: always, format: slack }\n';

function channelEnv(url: string): Record<string, string> {
  return {
    HC_URL: `${url}/ping/ping-9f2c41`,
    HOOK_JSON: `${url}/hook/hook-json-77aa`,
    HOOK_SLACK: `${url}/hook/hook-slack-88bb`,
    HOOK_SECRET: 'signing-key-x1',
    SITEFLEET_NOTIFY_BACKOFF_MS: '5',
  };
}

const readReport = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Report;
const to = (requests: Received[], prefix: string) => requests.filter((r) => r.path.startsWith(prefix));

function verifies(request: Received, secret: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`);
  const given = Buffer.from(String(request.headers['x-sitefleet-signature']));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('a run tells a ping, webhooks and a metrics file', () => {
  it('pings /start before the fleet is read and /<exit code> at the end; one signed JSON post with the report’s counts; slack has text; no secret anywhere', async () => {
    const { sim } = await start({ sites: 8, operationDelayMs: 0, seed: 3 });
    sim.setFaults('503=0.5', { writesOnly: true }); // some backups end unknown: exit 1
    const receiver = await receive();
    let simRequestsAtStart = -1;
    receiver.onRequest = (r) => void (r.path.endsWith('/start') && (simRequestsAtStart = sim.log.length));
    const dir = tempDir();
    const reportPath = join(dir, 'r.json');
    const metricsPath = join(dir, 'sitefleet.prom');
    const run = await runCli(['run', writePlaybook(PLAYBOOK(BOTH), dir), '--yes', '--report', reportPath, '--metrics-file', metricsPath], {
      ...simEnv(sim),
      ...channelEnv(receiver.url),
    });
    expect(run.code, run.stderr).toBe(1);
    const report = readReport(reportPath);
    expect(report.summary.unknown).toBeGreaterThan(0);

    expect(simRequestsAtStart).toBe(0); // the start ping came before the first request of any kind
    expect(to(receiver.requests, '/ping/').map((r) => r.path)).toEqual(['/ping/ping-9f2c41/start', '/ping/ping-9f2c41/1']);
    expect(to(receiver.requests, '/ping/')[1]!.body).toBe(
      `sitefleet nightly: exit 1 (some steps failed or are unknown): ${report.summary.accepted} accepted, ${report.summary.unknown} unknown\n`,
    );

    const json = to(receiver.requests, '/hook/hook-json-77aa');
    expect(json).toHaveLength(1);
    expect(verifies(json[0]!, 'signing-key-x1')).toBe(true);
    expect(verifies({ ...json[0]!, body: json[0]!.body.replace('"exit_code":1', '"exit_code":0') }, 'signing-key-x1')).toBe(false);
    const body = JSON.parse(json[0]!.body) as Record<string, unknown> & { tasks: { task: string; counts: Record<string, number> }[]; problems: unknown[] };
    expect(body).toMatchObject({ playbook: 'nightly', run_id: report.run_id, exit_code: 1, summary: report.summary, report: reportPath });
    expect(body.tasks).toEqual([{ task: 'backup', action: 'backups.create', counts: expect.objectContaining({ unknown: report.summary.unknown }) }]);
    expect(body.problems.length + (body.problems_not_listed as number)).toBe(report.summary.unknown + report.summary.failed);
    expect(Math.abs(Date.parse(body.sent_at as string) - Date.now())).toBeLessThan(60_000);

    const slack = to(receiver.requests, '/hook/hook-slack-88bb');
    expect(slack).toHaveLength(1);
    expect(slack[0]!.headers['x-sitefleet-signature']).toBeUndefined();
    const message = JSON.parse(slack[0]!.body) as { text: string; blocks: unknown[] };
    expect(message.text).toMatch(/^❌ sitefleet nightly: exit 1 \(some steps failed or are unknown\): /);
    expect(message.blocks.length).toBeGreaterThan(1);

    const metrics = readFileSync(metricsPath, 'utf8');
    expect(metrics).toContain('sitefleet_last_run_exit_code{playbook="nightly"} 1\n');
    expect(metrics).toContain(`sitefleet_steps{playbook="nightly",task="backup",status="unknown"} ${report.summary.unknown}\n`);

    const written = [run.stdout, run.stderr, readFileSync(reportPath, 'utf8'), readFileSync(join(dir, 'r.journal.jsonl'), 'utf8'), metrics].join('\n');
    for (const secret of SECRETS) expect(written).not.toContain(secret);
    expect(written).not.toContain(receiver.url);
  });

  it('a receiver answering 500 gets three tries per message; one warning line per channel, the report says so, the exit code is the run’s', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    const receiver = await receive();
    receiver.status = 500;
    const dir = tempDir();
    const reportPath = join(dir, 'r.json');
    const run = await runCli(['run', writePlaybook(PLAYBOOK(BOTH), dir), '--yes', '--report', reportPath], { ...simEnv(sim), ...channelEnv(receiver.url) });
    expect(run.code, run.stderr).toBe(0);
    expect(to(receiver.requests, '/ping/').map((r) => r.path)).toEqual([...Array(3).fill('/ping/ping-9f2c41/start'), ...Array(3).fill('/ping/ping-9f2c41/0')]);
    expect(to(receiver.requests, '/hook/hook-json-77aa')).toHaveLength(3);
    expect(to(receiver.requests, '/hook/hook-slack-88bb')).toHaveLength(3);
    const warnings = run.stderr.split('\n').filter((l) => l.startsWith('sitefleet: warning: ') && l.includes('not delivered'));
    expect(warnings).toEqual([
      "sitefleet: warning: ping: the run's start was not delivered (HTTP 500, 3 tries); the run's outcome stands",
      "sitefleet: warning: ping: the run's end was not delivered (HTTP 500, 3 tries); the run's outcome stands",
      "sitefleet: warning: webhook 1: the run's end was not delivered (HTTP 500, 3 tries); the run's outcome stands",
      "sitefleet: warning: webhook 2: the run's end was not delivered (HTTP 500, 3 tries); the run's outcome stands",
    ]);
    expect(readReport(reportPath).undelivered).toEqual([
      { channel: 'ping', at: 'start', tries: 3, error: 'HTTP 500' },
      { channel: 'ping', at: 'end', tries: 3, error: 'HTTP 500' },
      { channel: 'webhook 1', at: 'end', tries: 3, error: 'HTTP 500' },
      { channel: 'webhook 2', at: 'end', tries: 3, error: 'HTTP 500' },
    ]);
    for (const secret of SECRETS) expect(run.stderr + readFileSync(reportPath, 'utf8')).not.toContain(secret);
  });

  it('on: failure stays quiet on success; on: change posts the first run and each change, not a repeat; a 4xx is not tried again', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const receiver = await receive();
    const dir = tempDir();
    const env = { ...simEnv(sim), ...channelEnv(receiver.url) };
    const notify = '    - { url: "${HOOK_JSON}" }\n    - { url: "${HOOK_SLACK}", on: change, format: slack }\n';
    const file = writePlaybook(PLAYBOOK(notify), dir);
    const runOnce = async (n: number) => {
      const run = await runCli(['run', file, '--yes', '--report', join(dir, `r${n}.json`)], env);
      return run.code;
    };
    expect(await runOnce(1)).toBe(0);
    expect(await runOnce(2)).toBe(0);
    sim.setFaults('500=1', { writesOnly: true });
    expect(await runOnce(3)).toBe(1);
    const posts = receiver.requests.filter((r) => r.path.startsWith('/hook/'));
    // run 1: change (the first known); run 2: nothing; run 3: failure and change.
    expect(posts.map((r) => r.path)).toEqual(['/hook/hook-slack-88bb', '/hook/hook-json-77aa', '/hook/hook-slack-88bb']);
    receiver.status = 404;
    const refused = await runCli(['run', file, '--yes', '--report', join(dir, 'r4.json')], env);
    expect(refused.code).toBe(1);
    expect(receiver.requests.filter((r) => r.path.startsWith('/hook/')).length - posts.length).toBe(1); // the failure post, once; no change since run 3
    expect(refused.stderr).toContain("sitefleet: warning: webhook 1: the run's end was not delivered (HTTP 404, 1 try)");
  });

  it('Ctrl-C still tells: the end ping is /130, the webhook has the interrupted report', async () => {
    const { sim } = await start({ sites: 8, operationDelayMs: 0 });
    const receiver = await receive();
    const dir = tempDir();
    const reportPath = join(dir, 'r.json');
    const [{ main }, { capturedIo }] = await Promise.all([
      import(pathToFileURL(join(CLI, '../program.js')).href) as Promise<typeof Program>,
      import(pathToFileURL(join(CLI, '../../app/io.js')).href) as Promise<typeof IoModule>,
    ]);
    const io = capturedIo({ env: { ...simEnv(sim), ...channelEnv(receiver.url) } });
    const running = main(['run', writePlaybook(PLAYBOOK(BOTH), dir), '--yes', '--rate', '4/s', '--report', reportPath], io);
    await waitFor(() => sim.log.some((e) => e.method === 'POST'));
    io.signals.emit('SIGINT', 'SIGINT');
    expect(await running).toBe(130);
    expect(to(receiver.requests, '/ping/').map((r) => r.path)).toEqual(['/ping/ping-9f2c41/start', '/ping/ping-9f2c41/130']);
    const body = JSON.parse(to(receiver.requests, '/hook/hook-json-77aa')[0]!.body) as { exit_code: number; stopped: { kind: string }; continue_with: string };
    expect(body).toMatchObject({ exit_code: 130, stopped: { kind: 'interrupted' }, continue_with: `sitefleet resume ${reportPath}` });
  });

  it('a run an error ends before its report still tells its exit code: the window closed (5), nothing read from the fleet', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const receiver = await receive();
    const dir = tempDir();
    const past = new Date(Date.now() - 60_000).toISOString();
    const run = await runCli(['run', writePlaybook(PLAYBOOK(BOTH), dir), '--yes', '--not-after', past, '--report', join(dir, 'r.json')], {
      ...simEnv(sim),
      ...channelEnv(receiver.url),
    });
    expect(run.code, run.stderr).toBe(5);
    expect(sim.log).toHaveLength(0);
    expect(to(receiver.requests, '/ping/').map((r) => r.path)).toEqual(['/ping/ping-9f2c41/start', '/ping/ping-9f2c41/5']);
    const body = JSON.parse(to(receiver.requests, '/hook/hook-json-77aa')[0]!.body) as Record<string, unknown>;
    expect(body).toMatchObject({ exit_code: 5, summary: null, report: null });
    expect(body.error).toEqual(expect.stringContaining('--not-after'));
  });

  it('a channel that cannot be used is exit 2 before anything is sent, naming the field, never the value', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const dir = tempDir();
    const file = writePlaybook(PLAYBOOK(BOTH), dir);
    const unset = await runCli(['run', file, '--yes'], { ...simEnv(sim), HC_URL: 'http://127.0.0.1:9/ping/ping-9f2c41', HOOK_JSON: 'ftp://hook-json-77aa/x' });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/playbook\.yaml:6:\d+: settings\.notify\.0\.url: the value of HOOK_JSON is a ftp URL, not http\(s\)/);
    expect(unset.stderr).toMatch(/settings\.notify\.0\.secret: environment variable HOOK_SECRET is not set/);
    const literal = writePlaybook(
      'version: 1\nname: n\nsettings: { ping: "http://127.0.0.1/ping-9f2c41" }\ntasks:\n  - { name: b, action: backups.create, target: all }\n',
      dir,
      'lit.yaml',
    );
    const refused = await runCli(['run', literal, '--yes'], simEnv(sim));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/lit\.yaml:3:\d+: settings\.ping: /);
    const flag = await runCli(['run', file, '--yes', '--ping', 'not a url ping-9f2c41'], { ...simEnv(sim), ...channelEnv('http://127.0.0.1:9') });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--ping: the value given is not a URL');
    for (const r of [unset, refused, flag]) for (const secret of SECRETS) expect(r.stderr + r.stdout).not.toContain(secret);
    expect(sim.log).toHaveLength(0);
  });
});
