import { targetLabel, type ReportResult } from './report.js';

/** The targets of one output (or of none), in report order. */
export interface OutputGroup {
  /** What was printed, trailing whitespace trimmed (a trailing newline makes no other answer); null for none. */
  output: string | null;
  targets: string[];
}

/** A task's command outputs, most common first; the environments that answered none last. */
export interface TaskOutputs {
  task: string;
  command?: string;
  groups: OutputGroup[];
}

/**
 * The outputs of each task whose steps carry one (a WP-CLI command's step), grouped by what was printed:
 * asking the fleet a question (`wp core version`) answers with a few groups, not 10,000 lines.
 */
export function taskOutputs(results: readonly ReportResult[]): TaskOutputs[] {
  const byTask = new Map<string, { command?: string; groups: Map<string | null, string[]> }>();
  for (const r of results) {
    if (r.output === undefined) continue;
    const task = byTask.get(r.task) ?? { command: commandOf(r), groups: new Map<string | null, string[]>() };
    byTask.set(r.task, task);
    const output = r.output === null ? null : r.output.trimEnd();
    task.groups.set(output, [...(task.groups.get(output) ?? []), targetLabel(r)]);
  }
  return [...byTask].map(([task, { command, groups }]) => ({
    task,
    ...(command !== undefined && { command }),
    groups: [...groups]
      .map(([output, targets]) => ({ output, targets }))
      .sort((a, b) => Number(a.output === null) - Number(b.output === null) || b.targets.length - a.targets.length),
  }));
}

/** Each task's created resources: `acme-1/live` → the new environment's id. */
export function createdBy(results: readonly ReportResult[]): { task: string; made: { target: string; id: string; kind: 'environment' | 'site' }[] }[] {
  const byTask = new Map<string, { target: string; id: string; kind: 'environment' | 'site' }[]>();
  for (const r of results) {
    if (!r.created) continue;
    const made = 'env_id' in r.created ? { id: r.created.env_id, kind: 'environment' as const } : { id: r.created.site_id, kind: 'site' as const };
    byTask.set(r.task, [...(byTask.get(r.task) ?? []), { target: targetLabel(r), ...made }]);
  }
  return [...byTask].map(([task, made]) => ({ task, made }));
}

function commandOf(r: ReportResult): string | undefined {
  const command = (r.request?.body as { wp_command?: unknown } | undefined)?.wp_command;
  return typeof command === 'string' ? command : undefined;
}
