import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runCliProcess, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useRedis } from '../helpers/redis.js';
import { useSimulator } from '../helpers/sim.js';

// Real redis-server processes and real CLI processes: no Redis mocks behind these claims.
const start = useSimulator();
const redis = useRedis();

/** A playbook of one backup per environment, under its own name. */
function backups(name: string, settings = 'lock: playbook', wait = false): string {
  return `version: 1\nname: ${name}\nsettings: { ${settings} }\ntasks:\n  - { name: b, action: backups.create, target: all, wait: ${wait}, with: { tag: "${name}-{{env}}" } }\n`;
}

describe('--coordination is optional', () => {
  it('without the flag nothing of Redis is loaded; with it, it is (the check can fail)', async () => {
    const { sim } = await start({ sites: 2 });
    const r = await redis();
    const dir = tempDir();
    const playbook = writePlaybook(backups('x', 'lock: company'), dir);
    // A loader hook that refuses ioredis, imported or required (the bundle requires it): a command that loads it fails.
    const refuse = join(dir, 'refuse-ioredis.cjs');
    writeFileSync(
      refuse,
      `const Module = require('node:module'); const load = Module._load;
Module._load = function (request) { if (request === 'ioredis') throw new Error('ioredis was loaded'); return load.apply(this, arguments); };
Module.register('data:text/javascript,' + encodeURIComponent('export async function resolve(s, c, n) { if (s === "ioredis") throw new Error("ioredis was loaded"); return n(s, c); }'));`,
    );
    // A process of its own: what a command loads is the process's, and the hook is set at its start.
    // At --rate 50/s: the service's default 2/s would spend seconds on the backups, which are not what is looked at.
    const env = { ...simEnv(sim), NODE_OPTIONS: `--require=${refuse}` };
    const plain = await runCliProcess(['--rate', '50/s', 'run', playbook, '--yes', '--report', join(dir, 'a.json')], env);
    expect(plain.code, plain.stderr).toBe(0);
    const coordinated = await runCliProcess(['--rate', '50/s', '--coordination', r.url, 'run', playbook, '--yes', '--report', join(dir, 'b.json')], env);
    expect(coordinated.code).not.toBe(0);
    expect(coordinated.stderr).toMatch(/ioredis was loaded/);
  });

  it('a bad --coordination URL is exit 2, an unreachable Redis exit 3, and nothing is sent', async () => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const playbook = writePlaybook(backups('x', 'lock: company'), dir);
    const bad = await runCli(['--coordination', 'http://127.0.0.1:1/0', 'run', playbook, '--yes'], simEnv(sim));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--coordination http:\/\/127.0.0.1:1\/0: only redis:\/\/ and rediss:\/\/ URLs are understood/);
    const r = await redis();
    await r.stop();
    const down = await runCli(['run', playbook, '--yes', '--report', join(dir, 'a.json')], { ...simEnv(sim), SITEFLEET_COORDINATION: r.url });
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(new RegExp(`cannot reach Redis at redis://127.0.0.1:${r.port}/0 for --coordination .*; nothing was sent`));
    expect(sim.log).toEqual([]);
    const doctor = await runCli(['doctor', '--report-dir', dir], { ...simEnv(sim), SITEFLEET_COORDINATION: r.url });
    expect(doctor.code).toBe(3);
    expect(doctor.stdout).toMatch(/fail\s+coordination\s+cannot reach Redis/);
  });

  it('a Redis that refuses the scripts (an ACL without EVAL) is exit 3 naming that, and nothing is sent', async () => {
    const { sim } = await start({ sites: 2 });
    const r = await redis();
    const { Redis } = await import('ioredis');
    const admin = new Redis(r.port, '127.0.0.1');
    await admin.call('ACL', 'SETUSER', 'limited', 'on', '>secret-pw', '~*', '+@all', '-evalsha', '-eval');
    await admin.quit();
    const dir = tempDir();
    const res = await runCli(['run', writePlaybook(backups('x', 'lock: company'), dir), '--yes', '--report', join(dir, 'a.json')], {
      ...simEnv(sim),
      SITEFLEET_COORDINATION: `redis://limited:secret-pw@127.0.0.1:${r.port}/0`,
    });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(new RegExp(`Redis at redis://127.0.0.1:${r.port}/0 refused a coordination script \\(NOPERM`));
    expect(res.stderr).not.toContain('secret-pw');
    expect(sim.log).toEqual([]);
  });
});
