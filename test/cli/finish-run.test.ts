import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { finishRun, REPORT_OUTPUTS, RUN_OUTPUTS, type Finished, type RunOutput } from '../../src/app/finish-run.js';
import { addOutputOptions } from '../../src/cli/commands/run-flags.js';
import { buildProgram } from '../../src/cli/program.js';
import { capturedIo } from '../../src/app/io.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

const PHP = 'version: 1\nname: p\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n';

interface JUnit {
  testsuites: { tests: string; failures: string };
}
const junitOf = (file: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(readFileSync(file, 'utf8')) as JUnit;

describe('every command that ends a run ends it through finishRun', () => {
  it('run and resume declare the output flags, from the outputs themselves; status those of the report alone (it is no run to tell of)', async () => {
    const program = await buildProgram(capturedIo());
    const flagsOf = (outputs: readonly RunOutput[]) => outputs.flatMap((o) => (o.option ? [o.option.flags.split(' ')[0]] : []));
    expect(flagsOf(RUN_OUTPUTS)).toEqual(['--junit', '--summary-md', '--html', '--metrics-file', '--ping']);
    expect(flagsOf(REPORT_OUTPUTS)).toEqual(['--junit', '--summary-md', '--html']);
    const longs = (name: string) => program.commands.find((c) => c.name() === name)!.options.map((o) => o.long);
    for (const name of ['run', 'resume']) expect(longs(name), name).toEqual(expect.arrayContaining(flagsOf(RUN_OUTPUTS)));
    for (const name of ['status', 'restore']) {
      expect(longs(name), name).toEqual(expect.arrayContaining(flagsOf(REPORT_OUTPUTS)));
      expect(longs(name), name).not.toContain('--ping');
    }
  });

  it('hands every output the same finished run, in order, and says how long each took', async () => {
    const seen: string[] = [];
    const output = (name: string): RunOutput => ({
      name,
      option: name === 'b' ? { flags: '--bee <file>', description: 'b' } : undefined,
      files: () => [],
      write: async (finished) => {
        await Promise.resolve();
        seen.push(`${name}:${finished.report.path}`);
      },
    });
    const io = capturedIo();
    const finished = { report: { flag: 'report', path: 'r.json', value: {} }, flags: {}, env: {}, io, quiet: true } as unknown as Finished;
    const took = await finishRun(finished, [output('a'), output('b')]);
    expect(seen).toEqual(['a:r.json', 'b:r.json']);
    expect(Object.keys(took)).toEqual(['a', 'b']);
    const command = (await buildProgram(io)).commands.find((c) => c.name() === 'validate')!;
    expect(addOutputOptions(command, [output('a'), output('b')]).options.map((o) => o.long)).toContain('--bee');
  });

  it('an output that fails is one warning: the outputs after it still go, and the run keeps its outcome', async () => {
    const seen: string[] = [];
    const io = capturedIo();
    const failing: RunOutput = {
      name: 'junit',
      files: () => [],
      write: () => {
        throw new Error('EACCES: permission denied');
      },
    };
    const later: RunOutput = { name: 'ping', files: () => [], write: () => void seen.push('ping') };
    const finished = { report: { flag: 'report', path: 'r.json', value: {} }, flags: {}, env: {}, io, quiet: true } as unknown as Finished;
    await finishRun(finished, [failing, later]);
    expect(seen).toEqual(['ping']);
    expect(io.stderr.text).toBe("sitefleet: warning: junit: the run's end was not delivered (EACCES: permission denied, 1 try); the run's outcome stands\n");
  });

  it('resume with nothing left to send still writes --junit and --summary-md, and sends nothing', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const run = await runCli(['run', writePlaybook(PHP, dir), '--yes', '--wait', '--poll-interval', '20', '--report', report], simEnv(sim));
    expect(run.code, run.stderr).toBe(0);
    const requests = sim.log.length;
    const junit = join(dir, 'j.xml');
    const md = join(dir, 's.md');
    const resumed = await runCli(['resume', report, '--yes', '--junit', junit, '--summary-md', md], simEnv(sim));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('nothing left to send: every step has ended.');
    expect(sim.log).toHaveLength(requests);
    const steps = (JSON.parse(readFileSync(report, 'utf8')) as { summary: { total: number } }).summary.total;
    expect(Number(junitOf(junit).testsuites.tests)).toBe(steps);
    expect(readFileSync(md, 'utf8')).toContain(report);
  });

  it('status --junit writes the outcome it learned, as run would have', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0, failOperations: 1 });
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const junit = join(dir, 'j.xml');
    const run = await runCli(['run', writePlaybook(PHP, dir), '--yes', '--report', report], simEnv(sim));
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(junit)).toBe(false);
    const status = await runCli(['status', report, '--wait', '10s', '--junit', junit], simEnv(sim));
    expect(status.code).toBe(1);
    const { summary } = JSON.parse(readFileSync(report, 'utf8')) as { summary: { failed: number; total: number } };
    expect(summary.failed).toBe(summary.total);
    expect(Number(junitOf(junit).testsuites.failures)).toBe(summary.failed);
  });
});
