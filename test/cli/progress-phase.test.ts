import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/** Runs the CLI on a pseudo-terminal (util-linux `script`), as a person at a terminal would; returns what the terminal showed. */
function onTerminal(args: string[], env: Record<string, string>): Promise<{ code: number | null; screen: string }> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const child = spawn('script', ['-qec', [process.execPath, CLI, ...args].map(quote).join(' '), '/dev/null'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'dumb', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.on('data', (d: Buffer) => (screen += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, screen })));
}

describe('the progress line on a terminal', () => {
  it('shows the phase: sending with counts, then the operations waited for, the next poll and an ETA (not "ETA 0s" while waiting)', async () => {
    const { sim } = await start({ sites: 10, themes: 3, seed: 4, operationDelayMs: [2000, 3000] });
    const dir = tempDir();
    const file = writePlaybook(
      'version: 1\nname: php\nsettings: { rate_limit: 20/s, wait: true }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n',
      dir,
    );
    const { code, screen } = await onTerminal(['run', file, '--yes', '--report', join(dir, 'r.json')], simEnv(sim));
    expect(code).toBe(0);
    const lines = screen.split(/\r|\n/).map((l) => l.replaceAll('\u001b[K', ''));
    expect(lines.some((l) => /^sending \d+\/\d+ · \d+ running · \d+ done · 0 failed/.test(l))).toBe(true);
    const waiting = lines.filter((l) => /^all \d+ sent · waiting for [1-9]\d* operations? · \d+ done · 0 failed/.test(l));
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting.some((l) => / · next poll in \d+s/.test(l))).toBe(true);
    // The ETA counts the wait: while an operation runs it is never sooner than the next look at it.
    for (const l of waiting) {
      const [, next, eta] = / · next poll in (\d+)s(?: · ETA (\d+)s)?/.exec(l) ?? [];
      if (next !== undefined && eta !== undefined) expect(Number(eta)).toBeGreaterThanOrEqual(Number(next));
    }
    expect(waiting.some((l) => / · ETA [1-9]\d*s/.test(l))).toBe(true);
  });
});
