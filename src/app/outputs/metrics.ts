import type { RunEnd } from '../../notify/run-end.js';
import type { OutputFile } from '../../util/output-file.js';
import type { OutputStart, RunOutput, Undelivered } from './output.js';
import { endOfAbandoned, endOfFinished, sourceOf } from './channel-shared.js';

/**
 * `--metrics-file FILE` or `settings.metrics_file`: the run's metrics in Prometheus' text format, for
 * node_exporter's textfile collector (a `*.prom` file in its folder). Several playbooks may name one
 * file: each replaces only its own series. A file that cannot be written is a warning, never the
 * run's outcome.
 */
export const metrics: RunOutput = {
  name: 'metrics',
  option: {
    flags: '--metrics-file <file>',
    description: "write the run's metrics in Prometheus' text format (node_exporter's textfile collector); other playbooks' series in it are kept",
  },
  async files(start) {
    const file = await fileOf(start);
    return file ? [file] : [];
  },
  async write(finished) {
    return finished.started ? write(finished, endOfFinished(finished)) : [];
  },
  async abandon(abandoned) {
    return write(abandoned.started, endOfAbandoned(abandoned));
  },
};

async function fileOf(start: OutputStart): Promise<OutputFile | undefined> {
  const { metricsFile } = await import('../../notify/channels.js');
  const path = metricsFile(sourceOf(start));
  if (path === undefined) return undefined;
  return { flag: start.flags.metricsFile ? '--metrics-file' : 'settings.metrics_file', path, kind: 'metrics' };
}

async function write(start: OutputStart, end: RunEnd): Promise<Undelivered[]> {
  const file = await fileOf(start);
  if (!file) return [];
  const { writeMetrics } = await import('../../notify/metrics-file.js');
  try {
    await writeMetrics(file, end);
    return [];
  } catch (error) {
    return [{ channel: 'metrics', at: 'end', tries: 1, error: (error as NodeJS.ErrnoException).code ?? (error as Error).message }];
  }
}
