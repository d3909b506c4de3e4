import { InvalidInputError, type InputProblem } from '../errors.js';
import { loadPlaybook, type LoadOptions } from '../playbook/load.js';
import type { Playbook } from '../playbook/types.js';
import { offlineBodyProblems } from '../plan/offline-check.js';

/**
 * Every body the playbook would send, checked against the API's schema without the service (see
 * offlineBodyProblems); problems are located in the playbook. Loading knows nothing of requests: the
 * commands that load a playbook (validate, plan, run) ask for this after it.
 */
export function assertBodiesValid(playbook: Playbook, date = new Date().toISOString().slice(0, 10)): void {
  const problems = offlineBodyProblems(playbook.tasks, playbook.company, date);
  if (problems.length > 0)
    throw new InvalidInputError(problems.map((p: InputProblem) => (p.file ? p : { file: playbook.file, ...playbook.locate(p.path), ...p })));
}

/** Loads and validates a playbook, then checks its bodies; warnings are handed on only when nothing is wrong. */
export function loadChecked(file: string, options: LoadOptions): Playbook {
  let warnings: InputProblem[] = [];
  const playbook = loadPlaybook(file, { ...options, onWarning: (w) => (warnings = w) });
  assertBodiesValid(playbook);
  if (warnings.length > 0) options.onWarning?.(warnings);
  return playbook;
}
