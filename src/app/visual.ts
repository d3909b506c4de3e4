import type { Logger } from 'pino';
import { lstatSync } from 'node:fs';
import { SitefleetError, UsageError, type InputProblem } from '../errors.js';
import type { Plan } from '../plan/plan.js';
import type { Playbook } from '../playbook/types.js';
import type { VisualPort } from '../run/visual-gate.js';
import { findChromium, locateChromium, sandboxProblem, SANDBOX_OFF_WARNING, VISUAL_USE } from '../util/chromium.js';
import { imagesFolderOf } from '../run/visual-images.js';
import { systemClock } from '../util/clock.js';
import { siteUserAgent } from '../util/version.js';

/** How many pages the browser loads and shoots at once when `settings.visual_concurrency` does not say. */
export const DEFAULT_VISUAL_CONCURRENCY = 2;

/** Whether any task looks at pages (`health.visual`): only then is a browser looked for, or its code loaded. */
export function wantsVisual(tasks: readonly { health?: { visual?: unknown } }[]): boolean {
  return tasks.some((t) => t.health?.visual !== undefined);
}

/**
 * Before anything is sent: a playbook that looks at pages needs Chromium here (exit 2, one line,
 * saying what to install), and the report's images folder must be a folder of its own or nothing.
 */
export function visualPreflight(playbook: Pick<Playbook, 'tasks' | 'settings'>, env: Record<string, string | undefined>, reportPath: string): void {
  if (!wantsVisual(playbook.tasks)) return;
  findChromium(env, VISUAL_USE);
  const sandboxed = playbook.settings.visual_sandbox !== false;
  const problem = sandboxed ? sandboxProblem(process.getuid?.()) : undefined;
  if (problem) throw new UsageError(problem);
  const folder = imagesFolderOf(reportPath);
  let stat;
  try {
    stat = lstatSync(folder);
  } catch {
    return; // made when the first picture is kept
  }
  if (stat.isSymbolicLink() || !stat.isDirectory())
    throw new UsageError(`images folder ${folder} is not a folder of its own (a link, or a file): move it, or pick another --report`);
}

/** What `validate` warns of (an error with --strict): Chromium is missing for a task that looks at pages. */
export function chromiumWarnings(playbook: Pick<Playbook, 'tasks' | 'file' | 'locate'>, env: Record<string, string | undefined>): InputProblem[] {
  const found = locateChromium(env, VISUAL_USE);
  if (!('problem' in found)) return [];
  return playbook.tasks
    .filter((t) => t.health?.visual)
    .map((t) => {
      const path = `tasks.${t.index}.health.visual`;
      return { file: playbook.file, ...playbook.locate(path), path, message: found.problem };
    });
}

/**
 * The run's browser, opened when its plan looks at pages: playwright-core, pixelmatch and pngjs are
 * loaded here and nowhere else, so a run without `health.visual` never loads them.
 */
export async function openVisual(
  plan: Plan,
  env: Record<string, string | undefined>,
  reportPath: string,
  run: { logger: Logger; signal?: AbortSignal; warn(line: string): void },
): Promise<{ port: VisualPort; close(): Promise<void> } | undefined> {
  if (!wantsVisual(plan.tasks)) return undefined;
  const chromium = findChromium(env, VISUAL_USE);
  const sandbox = plan.settings.visual_sandbox !== false;
  if (!sandbox) run.warn(SANDBOX_OFF_WARNING);
  const [{ Screenshooter }, { VisualGate }, { ReportImages }] = await Promise.all([
    import('../health/visual/screenshots.js'),
    import('../run/visual-gate.js'),
    import('../run/visual-images.js'),
  ]);
  let shooter;
  try {
    const concurrency = plan.settings.visual_concurrency ?? DEFAULT_VISUAL_CONCURRENCY;
    shooter = await Screenshooter.launch(chromium, { concurrency, userAgent: siteUserAgent(), sandbox });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const said = (error as Error).message;
    const problem = sandbox ? sandboxProblem(undefined, said) : undefined;
    if (problem) throw new UsageError(problem);
    throw new SitefleetError(`health.visual: could not start ${chromium}: ${said.split('\n')[0]}`);
  }
  return { port: new VisualGate(shooter, new ReportImages(reportPath), systemClock, run.logger, run.signal), close: () => shooter.close() };
}
