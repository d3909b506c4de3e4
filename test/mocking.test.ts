import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MOCKING } from './mocking-files.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

describe('files that replace a module', () => {
  it('are the ones the isolated project runs: a new one would share its stand-in with the files after it', () => {
    const mocking = testFiles(join(ROOT, 'test'))
      .filter((file) => /\bvi\.(do)?[mM]ock\(/.test(readFileSync(file, 'utf8')) && !file.endsWith('mocking.test.ts'))
      .map((file) => relative(ROOT, file));
    expect(mocking.sort()).toEqual([...MOCKING].sort());
  });
});
