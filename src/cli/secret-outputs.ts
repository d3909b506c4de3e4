import { ACTIONS } from '../actions/index.js';
import type { Playbook } from '../playbook/types.js';
import type { Plan } from '../plan/plan.js';
import type { StepResult } from '../run/types.js';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * What a task's answers hold that is a secret (login links) is written only to the file its action
 * names, readable by its owner alone (0600), and never to the report, the plan or a log. Returns a line
 * for each file written.
 */
export function writePrivateOutputs(playbook: Playbook, plan: Plan, results: Map<string, StepResult>): string[] {
  const written: string[] = [];
  for (const task of playbook.tasks) {
    const action = ACTIONS.get(task.action);
    if (!action?.privateOutput) continue;
    const steps = plan.steps.filter((s) => s.task_index === task.index).map((s) => ({ target: s.target, body: s.body, output: results.get(s.id)?.output }));
    const output = action.privateOutput(task.with, steps);
    if (!output) continue;
    writeFileAtomic(output.file, output.text, 0o600); // never through a symlink
    written.push(`${output.what} written to ${output.file} (mode 0600)`);
  }
  return written;
}
