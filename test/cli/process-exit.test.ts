import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCliProcess, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { fourPlugins, isolatedWrite, isolatingNight } from '../helpers/isolate.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/**
 * No process outlives its summary: a cron job sees the exit code. A process of its own, as cron runs
 * it (what keeps a process alive is the point), waited for until it exits; killed only far past its time.
 */
describe('a run ends with its exit code once its summary is written', () => {
  it('a strict night isolating with health.visual (Chromium) exits 3 by itself after its summary', async () => {
    const { sim } = await start({ sites: 1, seed: 5, pageCacheTtlMs: 0, rate: '50/s' });
    const { live } = fourPlugins(sim);
    // Small pages, and the gap between the looks before tiny: the browser's time is not what this is about.
    const yaml = isolatingNight(sim)
      .replace('rate_limit: 50/s', 'rate_limit: 50/s, visual_sandbox: false') // root here: see visual-chromium.test.ts
      .replace('on_broken: isolate', 'on_broken: isolate, visual: { gap: 10ms, viewport: { width: 320, height: 240 }, max_height: 240 }')
      .replace('max_failures: 100', 'max_failures: 0');
    const dir = tempDir();
    const report = join(dir, 'r.json');
    // Before issue 54's fix the look before each round its page broke (p0's) was never let go: its proxy kept the process alive.
    const ran = await runCliProcess(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', report], simEnv(sim), {
      timeoutMs: 120_000,
    });
    expect({ code: ran.code, signal: ran.signal }, ran.stderr).toEqual({ code: 3, signal: null });
    expect(ran.stdout).toContain('run stopped: failure budget exceeded in task "plugin updates": 1 failed, 0 allowed');
    // It ended by itself, not by main.ts's bound on what is left open.
    expect(ran.stderr).not.toContain('still open');
    expect(isolatedWrite(report, live.id).isolation).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
  }, 150_000);

  it('a handle left open after the command ended does not keep the process: it exits with the command’s code, naming what was open', async () => {
    // A server nothing closes, opened before the CLI loads: what a defect would leave.
    const leak = join(tempDir(), 'leak.mjs');
    writeFileSync(leak, "import { createServer } from 'node:net';\ncreateServer().listen(0, '127.0.0.1');\n");
    const invalid = writePlaybook('version: 1\nname: bad\ntasks: []\n');
    const ran = await runCliProcess(['validate', invalid], { NODE_OPTIONS: `--import=${pathToFileURL(leak).href}` }, { timeoutMs: 20_000 });
    expect({ code: ran.code, signal: ran.signal }, ran.stderr).toEqual({ code: 2, signal: null });
    expect(ran.stderr).toMatch(/sitefleet: warning: still open 2 s after the command ended \(.*TCPServerWrap.*\): exiting with its code 2\n$/);
  });
});
