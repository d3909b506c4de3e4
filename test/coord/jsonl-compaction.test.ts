import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { companyJsonl } from '../../src/coord/jsonl-file.js';
import { CLI, tempDir } from '../helpers/cli.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

describe('compacting a state-folder store', () => {
  it('keeps a line another process appends between the read and the rename', () => {
    const dir = tempDir();
    const file = companyJsonl(dir, 'staging', COMPANY, 'staging');
    const other = companyJsonl(dir, 'staging', COMPANY, 'staging');
    file.append(['a', 'a', 'b'], false);
    const compacted = file.compact((lines) => {
      other.append(['c'], false);
      return [...new Set(lines)];
    });
    expect(compacted).toBe(true);
    expect(linesOf(file.path)).toEqual(['a', 'b', 'c']);
    // No temporary file or lock is left beside it.
    expect(readdirSync(join(dir, 'staging'))).toEqual([`${COMPANY}.jsonl`]);
  });

  it('leaves the file alone when told it is not worth it, or while another process compacts it', () => {
    const dir = tempDir();
    const file = companyJsonl(dir, 'staging', COMPANY, 'staging');
    file.append(['a', 'a'], false);
    expect(file.compact(() => undefined)).toBe(false);
    let inner: boolean | undefined;
    file.compact((lines) => {
      inner = companyJsonl(dir, 'staging', COMPANY, 'staging').compact(() => []);
      return lines.slice(1);
    });
    expect(inner).toBe(false);
    expect(linesOf(file.path)).toEqual(['a']);
  });

  it('loses no line of processes appending while another compacts over and over', async () => {
    const dir = tempDir();
    const file = companyJsonl(dir, 'staging', COMPANY, 'staging');
    const module = pathToFileURL(join(CLI, '../../coord/jsonl-file.js')).href;
    const writer = (name: string) =>
      spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { companyJsonl } = await import(${JSON.stringify(module)});
           const file = companyJsonl(${JSON.stringify(dir)}, 'staging', ${JSON.stringify(COMPANY)}, 'staging');
           for (let i = 0; i < 150; i++) file.append([JSON.stringify({ w: ${JSON.stringify(name)}, i })], false);`,
        ],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
    const writers = ['w1', 'w2', 'w3'].map(writer);
    const ended = writers.map((w) => new Promise<number | null>((resolve) => w.once('exit', resolve)));
    let running = writers.length;
    for (const e of ended) void e.then(() => running--);
    let compactions = 0;
    while (running > 0) {
      // Each time a rewrite of its own: the lines in another order, so a rename always happens.
      if (file.compact((lines) => [...new Set(lines)].reverse())) compactions++;
      await turn();
    }
    expect(await Promise.all(ended)).toEqual([0, 0, 0]);
    const seen = new Set(linesOf(file.path));
    const missing = ['w1', 'w2', 'w3'].flatMap((w) => Array.from({ length: 150 }, (_, i) => JSON.stringify({ w, i })).filter((l) => !seen.has(l)));
    expect(missing).toEqual([]);
    expect(compactions).toBeGreaterThan(0);
  });
});
