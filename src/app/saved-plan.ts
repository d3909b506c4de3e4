import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { InvalidInputError, UsageError } from '../errors.js';
import type { Plan } from '../plan/plan.js';
import type { PlanChange } from '../plan/saved.js';
import { MAX_PLAYBOOK_BYTES, textLocator } from '../playbook/load.js';
import { readJsonFile } from '../util/json-input.js';
import { hasSeal } from '../util/seal.js';
import { planReadBackProblems } from '../plan/read-back.js';
import { formatDuration } from '../util/duration.js';
import { InputFileError, PlaybookFiles, readInputFile } from '../util/input-file.js';
import { dirname } from 'node:path';
import { targetLabel } from '../report/report.js';

/** A plan of 50,000 steps is some 40 MB of JSON; past this it is not a plan sitefleet wrote. */
const MAX_PLAN_BYTES = 256 << 20;

/** The playbook's text as `plan` saw it: a saved plan is applied only with the same text. */
export function playbookSha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * The playbook `run --plan FILE` applies when none is given: the one the plan names, only when the
 * plan carries this token's seal (a plan from a shared folder cannot pick which playbook runs), read
 * under the rule for any file a file names (inside the plan's folder, or allowed with --allow-outside), and
 * held to the plan's sha256 before a byte of it is parsed or quoted: a plan pointed at /etc/shadow
 * is refused by name.
 */
export function playbookNamedBy({ plan, file }: SavedPlan, token: string, allowOutside: readonly string[] = []): string {
  if (!hasSeal(token, 'plan', plan))
    throw new UsageError(
      `${file} does not carry this API token's seal, so the playbook it names is not taken on its word: give the playbook itself (\`sitefleet run PLAYBOOK --plan ${file}\`)`,
    );
  try {
    return new PlaybookFiles(dirname(file), allowOutside).resolve(plan.playbook);
  } catch (error) {
    if (!(error instanceof InputFileError)) throw error;
    throw new UsageError(
      `${file} names a playbook outside its folder: give the playbook itself (\`sitefleet run PLAYBOOK --plan ${file}\`), or ${error.message.replace(/^.*?: /, '')}`,
    );
  }
}

/** Refuses (exit 2) a playbook whose text is not the one the plan was made from; reads it as an input file, quotes nothing of it. */
export function refuseOtherText({ plan, file }: SavedPlan, playbook: string): void {
  try {
    readInputFile(playbook, MAX_PLAYBOOK_BYTES); // a regular file of a playbook's size, or a clear line
  } catch (error) {
    if (error instanceof InputFileError) throw new UsageError(`--plan ${file}: ${error.message}`);
    throw error;
  }
  if (playbookSha256(playbook) !== plan.made.playbook_sha256)
    throw new UsageError(`${file} was made from another text of ${playbook} (it has changed since the plan was made): ${again(playbook, file)}`);
}

function again(playbook: string, file: string): string {
  return `make a new plan with \`sitefleet plan ${playbook} --out ${file}\` and review it`;
}

export interface SavedPlan {
  plan: Plan & { made: NonNullable<Plan['made']> };
  file: string;
  /** The file's text, to locate a step's line. */
  text: string;
}

/** Reads a plan `plan --out` wrote; a file that is not one is exit 2 naming its line and field. */
export function readSavedPlan(file: string): SavedPlan {
  const { data, text } = readJsonFile(file, { what: 'plan', maxBytes: MAX_PLAN_BYTES, schema: 'plan.schema.json', locate: textLocator });
  const plan = data as Plan;
  const problems = planReadBackProblems(plan);
  if (problems.length > 0) {
    const locate = textLocator(text);
    throw new InvalidInputError(problems.slice(0, 1).map((p) => ({ file, ...locate(p.path), ...p })));
  }
  if (!plan.made)
    throw new InvalidInputError([
      { file, line: 1, path: 'made', message: 'the plan says neither when nor from what it was made: make it again with `sitefleet plan PLAYBOOK --out FILE`' },
    ]);
  return { plan: plan as SavedPlan['plan'], file, text };
}

/**
 * Refuses a saved plan that is not this company's, or fresh enough (exit 2): what
 * runs at night must be what was reviewed, from the fleet as it was reviewed, or nothing.
 */
export function refuseStalePlan({ plan, file }: SavedPlan, now: { playbook: string; company: string; maxAgeMs: number; at: number }): void {
  const fix = again(now.playbook, file);
  if (plan.company !== now.company) throw new UsageError(`${file} is a plan for company ${plan.company}, not ${now.company}: ${fix}`);
  const age = now.at - Date.parse(plan.made.at);
  if (age > now.maxAgeMs)
    throw new UsageError(
      `${file} was made ${formatDuration(age / 1000)} ago (${plan.made.at}), more than --max-plan-age ${formatDuration(now.maxAgeMs / 1000)}: ${fix}`,
    );
  if (age < -60_000) throw new UsageError(`${file} says it was made at ${plan.made.at}, in the future: check this machine's clock, or ${fix}`);
}

/** `--strict-plan`: every changed step, one line each naming the plan file, the step's line and field. */
export function changedPlanError({ plan, file, text }: SavedPlan, changed: PlanChange[]): InvalidInputError {
  const locate = textLocator(text);
  const index = new Map(plan.steps.map((s, i) => [s.id, i]));
  return new InvalidInputError(
    changed.map(({ step, change }) => {
      const path = `steps.${index.get(step.id)}`;
      return {
        file,
        ...locate(path),
        path,
        message: `changed since the plan (${step.task}, ${targetLabel(step)}): ${change}; --strict-plan sends nothing`,
      };
    }),
  );
}
