import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * The exit code of the last run of each playbook on this machine, for `on: change`: kept in the
 * state folder (beside the run locks), one small file per company and playbook name. Reports can go
 * anywhere (`--report`, a dated name each night), so the folder of reports is no record of which
 * run came before; the state folder is the one place every run of a playbook shares.
 */
export interface LastExit {
  exit_code: number;
  run_id?: string;
  at: string;
}

function fileOf(stateDir: string, company: string | undefined, name: string): string {
  const key = createHash('sha256')
    .update(`${company ?? ''}\0${name}`)
    .digest('hex')
    .slice(0, 32);
  return join(stateDir, 'last-exit', `${key}.json`);
}

/** The previous run's exit code, or undefined when none is known (or its file is not one of these). */
export function readLastExit(stateDir: string, company: string | undefined, name: string): number | undefined {
  try {
    const value = JSON.parse(readFileSync(fileOf(stateDir, company, name), 'utf8')) as Partial<LastExit>;
    return Number.isInteger(value.exit_code) ? value.exit_code : undefined;
  } catch {
    return undefined;
  }
}

export function writeLastExit(stateDir: string, company: string | undefined, name: string, last: LastExit): void {
  const file = fileOf(stateDir, company, name);
  mkdirSync(join(stateDir, 'last-exit'), { recursive: true, mode: 0o700 });
  writeFileAtomic(file, `${JSON.stringify(last)}\n`, 0o600);
}
