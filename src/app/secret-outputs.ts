import { ACTIONS } from '../actions/index.js';
import type { Playbook, Task } from '../playbook/types.js';
import type { Plan } from '../plan/plan.js';
import type { StepResult } from '../run/types.js';
import { writeOutput, type OutputFile } from '../util/output-file.js';

/** The file a task's private output goes to, located at its `with` field (for refusals), or undefined. */
function privateFileOf(playbook: Playbook, task: Task): OutputFile | undefined {
  const file = ACTIONS.get(task.action)?.privateFile?.(task.with);
  if (!file) return undefined;
  const path = `tasks.${task.index}.with.${file.field}`;
  return { flag: path, path: file.file, kind: file.kind, field: { file: playbook.file, ...playbook.locate(path), path } };
}

/** Every private output the playbook's tasks will write, for the check when the run starts. */
export function privateOutputFiles(playbook: Playbook): OutputFile[] {
  return playbook.tasks.flatMap((task) => privateFileOf(playbook, task) ?? []);
}

/**
 * What a task's answers hold that is a secret (login links) is written only to the file its action
 * names, readable by its owner alone (0600), and never to the report, the plan or a log. Returns a line
 * for each file written.
 */
export function writePrivateOutputs(playbook: Playbook, plan: Plan, results: ReadonlyMap<string, StepResult>): string[] {
  const written: string[] = [];
  for (const task of playbook.tasks) {
    const action = ACTIONS.get(task.action);
    const file = privateFileOf(playbook, task);
    if (!action?.privateOutput || !file) continue;
    const steps = plan.steps
      .filter((s) => s.task_index === task.index)
      .map((s) => {
        const result = results.get(s.id);
        return { target: s.target, body: s.body, status: result?.status, private_output: result?.private_output, output: result?.output };
      });
    const output = action.privateOutput(task.with, steps);
    if (!output) continue;
    writeOutput({ ...file, path: output.file }, output.text); // never through a link; mode 0600 (its kind's)
    written.push(`${output.what} written to ${output.file} (mode 0600)`);
  }
  return written;
}
