import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { InputProblem } from '../errors.js';

/**
 * A task's `output_file` must be in a folder that exists, checked before anything is sent: what it
 * holds is fetched once (login links, what a command printed), and a folder found missing only after
 * the run would lose it.
 */
export function outputFolderProblems(file: string): InputProblem[] {
  const folder = dirname(resolve(file));
  try {
    if (!statSync(folder).isDirectory()) return [{ path: 'output_file', message: `${folder} is not a folder` }];
  } catch (error) {
    return [{ path: 'output_file', message: `the folder ${folder} does not exist (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})` }];
  }
  return [];
}
