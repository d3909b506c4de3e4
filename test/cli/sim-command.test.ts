import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { HOSTILE_NAMES } from '../../src/sim/hostile-names.js';
import { CLI, runCli } from '../helpers/cli.js';

/** The simulator's start line; a simulator that exits first fails the test at once, with its exit code. */
function firstLine(child: ChildProcessByStdio<null, Readable, Readable | null>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code, signal) => reject(new Error(`sitefleet sim exited (${code ?? signal}) before its start line`)));
  });
}

describe('sitefleet sim', () => {
  it('prints its base URL, token and company as one JSON line, serves the spec paths, and enforces --rate', async () => {
    const child = spawn(process.execPath, [CLI, 'sim', '--size', '3', '--rate', '2/min', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await firstLine(child);
      const info = JSON.parse(line) as { base_url: string; token: string; company_id: string; environments: number };
      expect(info.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(info.environments).toBeGreaterThanOrEqual(3);
      expect(info.environments).toBeLessThanOrEqual(6); // --size 3: three sites, a live and often a staging environment each
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await request(`${info.base_url}/v2/company/${info.company_id}/api-keys`, { headers: { authorization: `Bearer ${info.token}` } });
        await res.body.text();
        statuses.push(res.statusCode);
      }
      // Two a minute, not a second: a loaded machine that takes a second over the three calls still sees the third refused.
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });

  it('--names hostile serves the hostile corpus, exactly, through the theme listing', async () => {
    const child = spawn(process.execPath, [CLI, 'sim', '--size', '3', '--names', 'hostile', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await firstLine(child);
      const info = JSON.parse(line) as { base_url: string; token: string; company_id: string };
      const res = await request(`${info.base_url}/v2/company/${info.company_id}/api-keys`, { headers: { authorization: `Bearer ${info.token}` } });
      // The key's name is the first of the corpus, escape sequences and all, as JSON writes it.
      expect(await res.body.text()).toContain(JSON.stringify(HOSTILE_NAMES[0]).slice(1, -1));
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });

  it('--rename renames a site as anyone on the account may, and the listing serves the new name; an unknown one is exit 2', async () => {
    const args = [CLI, 'sim', '--size', '2', '--seed', '3', '--json', '--rename', 'site:acme-001=${SITEFLEET_TOKEN}'];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const line = await firstLine(child);
      const info = JSON.parse(line) as { base_url: string; token: string; company_id: string };
      const res = await request(`${info.base_url}/v2/company/${info.company_id}/wp-themes?offset=0&limit=100`, {
        headers: { authorization: `Bearer ${info.token}` },
      });
      const body = await res.body.text();
      expect(body).toContain('${SITEFLEET_TOKEN}');
      expect(body).not.toContain('"acme-001"');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    const unknown = spawn(process.execPath, [CLI, 'sim', '--size', '1', '--rename', 'site:nope=x'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    unknown.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    expect(await new Promise((r) => unknown.once('close', r))).toBe(2);
    expect(stderr.trim()).toBe('sitefleet: --rename: no site named "nope"');
  });

  it('prints the --health-url template of its site pages, as docs/simulator.md says, and a page there answers', async () => {
    const child = spawn(process.execPath, [CLI, 'sim', '--size', '2', '--seed', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const lines: string[] = [];
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          lines.push(line);
          if (line.startsWith('stop it')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`sitefleet sim exited (${code}) before its start lines`)));
      });
      const template = /^health checks: --health-url '(.+)'$/.exec(lines.find((l) => l.startsWith('health checks:')) ?? '')?.[1];
      expect(template).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sites\/\{\{domain\}\}\/$/);
      const page = await request(template!.replace('{{domain}}', 'acme-001.example.com'));
      await page.body.text();
      expect(page.statusCode).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });

  it('--help says each default once (--port: a free one, not also 0)', async () => {
    const { code, stdout } = await runCli(['sim', '--help']);
    expect(code).toBe(0);
    const help = stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--port <n> port to listen on (default: a free one)');
    const options = help.split(/ (?=--?[a-z])/);
    expect(options.filter((o) => (o.match(/\(default:/g) ?? []).length > 1)).toEqual([]);
  });
});
