import { createdBy, taskOutputs, type OutputGroup } from './answers.js';
import type { Report } from './report.js';
import { clip } from '../util/safe-text.js';

/** Outputs shown apart, most common first; the rest are counted (all are in the report). */
const SHOWN_GROUPS = 4;
/** Targets named for an output other than the most common one. */
const SHOWN_TARGETS = 5;
/** Created resources named per task. */
const SHOWN_CREATED = 10;
/** An output is shown by its first line, this long at most. */
const OUTPUT_WIDTH = 80;

/**
 * What the run's answers carried, for a summary: each command's outputs grouped ("6.4.3 on 118
 * environments; 6.3.1 on 14: acme-1/live, …"), a note where the service returned none, and the ids of
 * what was created. The lines hold service text as it came: each sink makes them safe for itself
 * (the terminal summary, the Markdown summary).
 */
export function answerLines(report: Report): string[] {
  const lines: string[] = [];
  for (const { task, command, groups } of taskOutputs(report.results)) {
    const printed = groups.filter((g) => g.output !== null);
    const none = groups.find((g) => g.output === null);
    const label = `${command === undefined ? 'output' : `output of ${JSON.stringify(command)}`} (${task})`;
    if (printed.length > 0) lines.push(`${label}: ${printed.slice(0, SHOWN_GROUPS).map(groupText).join('; ')}${restText(printed)}`);
    if (none) lines.push(`${label}: ${noneText(none.targets.length)}`);
  }
  for (const { task, made } of createdBy(report.results)) {
    const kinds = new Set(made.map((m) => m.kind));
    const noun = kinds.size === 1 ? `${[...kinds][0]}${made.length === 1 ? '' : 's'}` : 'resources';
    const named = made.slice(0, SHOWN_CREATED).map((m) => `${m.target} → ${m.id}`);
    lines.push(`created (${task}): ${made.length} ${noun}: ${named.join(', ')}${made.length > SHOWN_CREATED ? ', … (all in the report)' : ''}`);
  }
  return lines;
}

function groupText(group: OutputGroup, i: number): string {
  const first = firstLine(group.output!);
  const where = i === 0 ? '' : `: ${group.targets.slice(0, SHOWN_TARGETS).join(', ')}${group.targets.length > SHOWN_TARGETS ? ', …' : ''}`;
  return `${first} on ${i === 0 ? count(group.targets.length) : group.targets.length}${where}`;
}

function restText(printed: OutputGroup[]): string {
  const rest = printed.slice(SHOWN_GROUPS);
  if (rest.length === 0) return '';
  return `; ${rest.length} other outputs on ${count(rest.reduce((n, g) => n + g.targets.length, 0))} (in the report)`;
}

/** The first line of an output, and how many more it has. */
function firstLine(output: string): string {
  const lines = output.split('\n');
  const first = clip(lines[0]!.trim() || '(an empty line)', OUTPUT_WIDTH);
  return lines.length > 1 ? `${first} [+${lines.length - 1} lines]` : first;
}

/** The one line for environments whose finished command came back with nothing it printed: allowed, and said so. */
function noneText(n: number): string {
  return `none returned on ${count(n)}: the service said the command succeeded and gave back nothing it printed (it may not return output)`;
}

function count(n: number): string {
  return `${n} environment${n === 1 ? '' : 's'}`;
}
