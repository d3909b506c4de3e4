import { extname } from 'node:path';
import { COMMAND_OUTPUT_COLUMNS } from '../util/output-file.js';
import { forCsv, jsonText } from '../util/safe-text.js';
import { outputFolderProblems } from './output-folder.js';
import type { Action, OperationReading, StepOutcome } from './action.js';
import { field, withBlock } from './schema-parts.js';

type WpCliWith = { wp_command: string; output_file?: string };

/** `wp config get` and `wp config list` print what wp-config.php holds. */
const PRINTS_SECRETS = /^wp\s+config\s+(get|list)\b/;

export const wpCliRun: Action<WpCliWith> = {
  name: 'wp_cli.run',
  summary: 'run a WP-CLI command (POST …/run-wp-cli-command); what it printed goes to the report and `output_file`',
  scope: 'environment',
  endpoint: 'runWpCliCommand',
  creates: true,
  example: { wp_command: 'wp core version', output_file: 'core-versions.csv' },
  withSchema: withBlock(
    {
      wp_command: field('run-wp-cli', 'wp_command'),
      output_file: {
        type: 'string',
        pattern: '\\.(csv|json)$',
        description: "file every environment's output is written to (mode 0600): CSV or JSON by its extension, relative to the working directory",
      },
    },
    ['wp_command'],
  ),
  expandEnvironment(env, ctx) {
    return [{ request: { endpoint: 'runWpCliCommand', params: { env_id: env.id }, body: { wp_command: ctx.with.wp_command } } }];
  },
  readOperation: commandOutput,
  record(step) {
    const command = (step.body as { wp_command?: unknown } | undefined)?.wp_command;
    return { heading: 'WP-CLI commands', text: String(command), ...(typeof step.output === 'string' && { detail: step.output }) };
  },
  // The output is kept in the report and the journal (files CI keeps as artifacts): a command that
  // prints the site's credentials would copy them there.
  advise: (w) =>
    typeof w.wp_command === 'string' && PRINTS_SECRETS.test(w.wp_command)
      ? [
          {
            path: 'wp_command',
            message: 'prints wp-config.php secrets (database password, salts), and a step keeps what its command printed in the report and the journal',
          },
        ]
      : [],
  check: (w) => (w.output_file === undefined ? [] : outputFolderProblems(w.output_file)),
  privateFile: (w) => (w.output_file === undefined ? undefined : { field: 'output_file', file: w.output_file, kind: 'command-output' }),
  privateOutput(w, steps) {
    if (w.output_file === undefined || steps.every((s) => s.status === undefined || s.status === 'planned')) return undefined;
    const rows = steps.map(outputRow);
    const text = extname(w.output_file).toLowerCase() === '.csv' ? csvOf(rows) : `${jsonText(rows, 2)}\n`;
    return { what: `the output of ${JSON.stringify(w.wp_command)} on ${rows.length} environments`, file: w.output_file, text };
  },
};

/**
 * What a command printed, from a finished operation's `data`. Sources on the real service disagree
 * (shared/real-service-notes.md): one reads `data.result`, one mocks it synchronously, one says no
 * output comes back at all. So a text (or number) under `result` or `output`, or `data` itself as
 * text, is the output; lines given as a list are joined; anything else is none (null).
 */
export function commandOutput(data: unknown): OperationReading {
  const inner = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  for (const value of inner ? [inner.result, inner.output] : [data]) {
    if (typeof value === 'string') return { output: value };
    if (typeof value === 'number' && Number.isFinite(value)) return { output: String(value) };
    if (Array.isArray(value) && value.length > 0 && value.every((line) => typeof line === 'string')) return { output: value.join('\n') };
  }
  return { output: null };
}

type Row = Record<(typeof COMMAND_OUTPUT_COLUMNS)[number], string | null>;

function outputRow(s: StepOutcome): Row {
  return {
    site: s.target.site ?? null,
    environment: s.target.environment ?? null,
    env_id: s.target.env_id ?? null,
    status: s.status ?? 'skipped',
    output: s.output ?? null,
  };
}

/** One line per environment; every cell through the CSV rule (no formulas, line breaks escaped). */
function csvOf(rows: Row[]): string {
  const lines = rows.map((row) => COMMAND_OUTPUT_COLUMNS.map((column) => forCsv(row[column] ?? '')).join(','));
  return `${[COMMAND_OUTPUT_COLUMNS.join(','), ...lines].join('\n')}\n`;
}
