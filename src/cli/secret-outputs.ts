import { writeFileAtomic } from '../util/atomic-write.js';
import type { Playbook } from '../playbook/types.js';
import type { Plan } from '../plan/plan.js';
import type { StepResult } from '../run/types.js';

/**
 * Login links are single-sign-on secrets: they are written only to the file the task names, readable
 * by its owner alone (0600), and never to the report, the plan or a log. Returns the files written.
 */
export function writeLoginLinks(playbook: Playbook, plan: Plan, results: Map<string, StepResult>): string[] {
  const written: string[] = [];
  for (const task of playbook.tasks.filter((t) => t.action === 'admin_users.login_link')) {
    const links = plan.steps
      .filter((s) => s.task_index === task.index)
      .flatMap((s) => {
        const output = results.get(s.id)?.output as { login_link?: string } | undefined;
        return output?.login_link
          ? [{ site: s.target.site, environment: s.target.environment, env_id: s.target.env_id, email: task.with.email, login_link: output.login_link }]
          : [];
      });
    if (links.length === 0) continue;
    const file = task.with.output_file as string;
    writeFileAtomic(file, `${JSON.stringify(links, null, 2)}\n`, 0o600); // never through a symlink
    written.push(file);
  }
  return written;
}
