import type { Backup } from '../api/types.js';
import type { Inventory } from '../inventory/inventory.js';
import type { Plan, Step } from '../plan/plan.js';
import { targetLabel } from '../report/report.js';
import { decideRoom, DEFAULT_MANUAL_BACKUP_SLOTS, oursIn, tagOfBackup } from '../run/backup-slots.js';
import { terminalName } from '../util/safe-text.js';

/**
 * What the plan's manual backups (restore points, and backup tasks') would do to their environments'
 * slots, shown before anything is sent (dry run and run alike). Where the plan read an environment's
 * backups (`unless_exists`), the backups sitefleet would remove to make room are named, as the run
 * decides (backup-slots.ts decideRoom), each backup of the plan taking a slot in turn; elsewhere the
 * list is read only before each backup, so one line says what may happen. A restore point removed
 * after its night is not counted as freeing a slot here: what is named is the most that can go.
 */
export function slotPreviewLines(plan: Plan, inventory: Pick<Inventory, 'backups'>): string[] {
  const slots = plan.settings.manual_backup_slots ?? DEFAULT_MANUAL_BACKUP_SLOTS;
  const ours = oursIn(plan);
  const byEnv = new Map<string, Step[]>();
  for (const s of plan.steps) if (s.endpoint === 'addManualBackup' && s.target.env_id) byEnv.set(s.target.env_id, [...(byEnv.get(s.target.env_id) ?? []), s]);
  const lines: string[] = [];
  let unknown = 0;
  for (const [env, steps] of byEnv) {
    const listed = inventory.backups?.[env];
    if (!listed) unknown += steps.length;
    else lines.push(...knownRoom(listed, steps, slots, ours));
  }
  if (unknown > 0)
    lines.push(
      `manual backups: ${unknown} may each remove the oldest backup sitefleet made on its environment when the environment's ${slots} slots are full (its list is read before each; never a person's)`,
    );
  return lines;
}

/** One environment's backups of the plan, each taking a slot in turn of the list the plan read. */
function knownRoom(listed: readonly Backup[], steps: readonly Step[], slots: number, ours: (tag: string) => boolean): string[] {
  const lines: string[] = [];
  let list = [...listed];
  for (const [i, step] of steps.entries()) {
    const tag = (step.body as { tag?: string } | undefined)?.tag ?? '';
    const where = terminalName(targetLabel({ target: step.target }));
    const room = decideRoom(list, slots, ours, new Set());
    if (room.kind === 'full') {
      lines.push(`manual backups: no slot on ${where} for ${terminalName(tag)}: its ${room.manual} manual backups are a person's (held no_backup_slot)`);
      continue;
    }
    const gone = room.remove.map((b) => `${b.id} (${terminalName(tagOfBackup(b))})`).join(', ');
    if (gone) lines.push(`manual backups: would remove backup ${gone} on ${where} to make room for ${terminalName(tag)}`);
    list = [...list.filter((b) => !room.remove.includes(b)), { id: -1 - i, name: tag, note: tag, type: 'manual', created_at: Number.MAX_SAFE_INTEGER }];
  }
  return lines;
}
