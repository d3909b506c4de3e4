import { EXIT_MEANING } from '../errors.js';
import { taskCounts } from '../report/task-counts.js';
import { forPrometheusLabel } from '../util/safe-text.js';
import type { RunEnd } from './run-end.js';

/** The metrics of one run, each with a `playbook` label, in the order they are written. */
export const FAMILIES = {
  sitefleet_last_run_timestamp_seconds: { type: 'gauge', help: 'When the last run of the playbook ended (Unix time).' },
  sitefleet_last_run_exit_code: {
    type: 'gauge',
    help: `Exit code of the last run: ${Object.entries(EXIT_MEANING)
      .map(([code, meaning]) => `${code} ${meaning}`)
      .join('; ')}.`,
  },
  sitefleet_last_run_duration_seconds: { type: 'gauge', help: 'How long the last run took, from its start to its report.' },
  sitefleet_steps: { type: 'gauge', help: 'Steps of the last run by task and status.' },
  // Gauges, not counters: each run writes its own value, which may be lower than the last (a counter must never go down).
  sitefleet_last_run_rate_limited: { type: 'gauge', help: 'Times the service answered 429 (rate limited) during the last run.' },
  sitefleet_last_run_restored: { type: 'gauge', help: 'Sites the last run put back from their restore points (health.on_broken: restore).' },
} as const;

const STATUSES = ['succeeded', 'accepted', 'failed', 'held', 'unknown', 'skipped'] as const;

function labels(pairs: Record<string, string>): string {
  return `{${Object.entries(pairs)
    .map(([k, v]) => `${k}="${forPrometheusLabel(v)}"`)
    .join(',')}}`;
}

/** This run's samples, by family: the lines that replace the playbook's own in a shared file. */
export function runSamples(end: RunEnd): Map<string, string[]> {
  const playbook = { playbook: end.name };
  const of = (value: number, extra: Record<string, string> = {}) => `${labels({ ...playbook, ...extra })} ${value}`;
  const samples = new Map<string, string[]>([
    ['sitefleet_last_run_timestamp_seconds', [of(Math.round(end.finishedAt.getTime() / 1000))]],
    ['sitefleet_last_run_exit_code', [of(end.exitCode)]],
    ['sitefleet_last_run_duration_seconds', [of(Math.round((end.finishedAt.getTime() - end.startedAt.getTime()) / 100) / 10)]],
    ['sitefleet_last_run_rate_limited', [of(end.rateLimited ?? 0)]],
  ]);
  const report = end.report?.value;
  if (report) {
    const steps: string[] = [];
    for (const { task, counts } of taskCounts(report.results)) for (const status of STATUSES) steps.push(of(counts[status], { task, status }));
    samples.set('sitefleet_steps', steps);
    samples.set('sitefleet_last_run_restored', [of(report.results.filter((r) => r.restored?.status === 'succeeded').length)]);
  }
  for (const [family, lines] of samples)
    samples.set(
      family,
      lines.map((l) => `${family}${l}`),
    );
  return samples;
}

interface Family {
  head: string[];
  samples: string[];
}

/**
 * A metrics file with this run's series in place of the playbook's own: the other playbooks' samples
 * are kept as they were, every family keeps (or gets) its `# HELP` and `# TYPE` lines, and samples
 * are sorted, so the file does not change with the order in which the playbooks ran.
 */
export function mergeMetrics(existing: string, end: RunEnd): string {
  const ours = `playbook="${forPrometheusLabel(end.name)}"`;
  const families = new Map<string, Family>();
  const familyOf = (name: string) => {
    let family = families.get(name);
    if (!family) families.set(name, (family = { head: [], samples: [] }));
    return family;
  };
  for (const name of Object.keys(FAMILIES)) familyOf(name);
  for (const line of existing.split('\n')) {
    const comment = /^#\s+(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    if (comment) {
      if (!(comment[2]! in FAMILIES)) familyOf(comment[2]!).head.push(line);
      continue;
    }
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (!name || labelPairs(line).includes(ours)) continue;
    familyOf(name).samples.push(line);
  }
  for (const [name, lines] of runSamples(end)) familyOf(name).samples.push(...lines);
  const out: string[] = [];
  for (const [name, family] of families) {
    if (family.samples.length === 0) continue;
    const known = FAMILIES[name as keyof typeof FAMILIES];
    out.push(...(known ? [`# HELP ${name} ${known.help}`, `# TYPE ${name} ${known.type}`] : family.head), ...family.samples.sort());
  }
  return `${out.join('\n')}\n`;
}

/** The `key="value"` pairs of a sample line, as written (values still escaped). */
export function labelPairs(line: string): string[] {
  const open = line.indexOf('{');
  if (open === -1) return [];
  const pairs: string[] = [];
  const pair = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/y;
  pair.lastIndex = open + 1;
  for (let m = pair.exec(line); m; m = pair.exec(line)) pairs.push(`${m[1]}="${m[2]}"`);
  return pairs;
}
