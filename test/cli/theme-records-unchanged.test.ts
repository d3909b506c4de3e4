import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();
const T0 = Date.parse('2026-11-20T02:00:00.000Z');

/**
 * Theme tasks keep their plans and reports byte for byte where nothing about them changed (issue 47:
 * themes and plugins became one model of an installed item). Each hash below was taken with the code
 * before plugins came (9bfa6dc), from the same seeded simulator and the same clock; a theme-only
 * playbook must still give exactly that plan, and its night exactly that report (times left out).
 */
const TASKS: Record<string, string> = {
  bulk: '    with: { themes: ["*"] }\n',
  pinned: '    with: { max_bump: minor }\n',
  aged: '    with: { min_release_age: 3d }\n',
  security: '    with: { only_vulnerable: true }\n',
  staged: '    rollout: { staging_first: true, soak: 1d }\n',
  guarded: '    backup_first: true\n    health: { url: "https://{{domain}}/", on_broken: restore }\n    rollout: { canary: 1, waves: ["50%", "100%"] }\n',
};

const PLANS: Record<string, string> = {
  bulk: '32ebdc9c75510581',
  pinned: '12dc98fb9f591f98',
  aged: 'ffb24cb3089d30a3',
  security: '72b630a517a525ce',
  staged: '51fa8dddf2d6e7d6',
  guarded: 'f9478c30d8072f6d',
};
const NIGHT = '0beb7f56fe22c9ba';

function playbook(task: string): string {
  return `version: 1\nname: themes\nsettings: { rate_limit: 50/s }\ntasks:\n  - name: t\n    action: themes.update\n    target: all\n${task}`;
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** A report with what differs from one night to the next left out: times, durations, the run's own paths. */
function steady(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(steady);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !/(_at|_ms|duration|elapsed|journal|report|file|started|ended|took)$|^(playbook|run_id)$/.test(k))
      .map(([k, v]) => [k, steady(v)]),
  );
}

describe('theme records are as they were before plugins came', () => {
  it.each(Object.keys(TASKS))('the plan of a theme task (%s) is byte for byte the one made before', async (name) => {
    const { sim } = await start({ sites: 6, seed: 11, now: () => T0 });
    const dir = tempDir();
    const out = join(dir, 'plan.json');
    const res = await runCli(
      ['plan', writePlaybook(playbook(TASKS[name]!), dir), '--out', out],
      { ...simEnv(sim), SITEFLEET_STATE_DIR: dir },
      { now: () => T0 },
    );
    expect(res.code, res.stderr).toBe(0);
    // The plan's date is the day it is made (its tags and templates say it): left out, as the made-at time.
    const { made: _made, seal: _seal, date, ...plan } = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    // So are the tags it makes of it (a backup's `sitefleet-before-t-<date>`): a plan made on another day is the same plan.
    const text = JSON.stringify({ ...plan, playbook: 'p.yaml' }).replaceAll(String(date), 'DATE');
    if (process.env.SITEFLEET_RECORD_HASHES) writeFileSync(`/tmp/theme-plan-${name}.json`, text);
    expect(hash(text)).toBe(PLANS[name]);
  });

  it('the report of a theme night is the one made before, times left out', async () => {
    const { sim } = await start({ sites: 4, seed: 11, operationDelayMs: 0 });
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const res = await runCli(['run', writePlaybook(`${playbook(TASKS.bulk!)}    wait: true\n`, dir), '--yes', '--report', report], {
      ...simEnv(sim),
      SITEFLEET_STATE_DIR: dir,
    });
    expect(res.code, res.stderr).toBe(0);
    const night = JSON.parse(readFileSync(report, 'utf8')) as { results: { step_id: string | null; request: { body?: unknown } | null; runs?: unknown }[] };
    // Since issue 55 every item write is read back and records what its environment runs (`runs`, new): the rest is as it was.
    for (const r of night.results.filter((x) => x.step_id !== null)) {
      const names = (r.request!.body as { themes: { name: string }[] }).themes.map((t) => t.name);
      expect(r.runs).toEqual(names.map((name) => ({ name, version: sim.fleet.catalog.get(name)!.versions.at(-1) })));
      delete r.runs;
    }
    const text = JSON.stringify(steady(night));
    if (process.env.SITEFLEET_RECORD_HASHES) writeFileSync('/tmp/theme-night.json', text);
    expect(hash(text)).toBe(NIGHT);
  });
});
