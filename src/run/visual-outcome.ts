import { percentText, type VisualSpec } from '../health/visual-spec.js';
import type { HeldReason, VisualPage, VisualRecord } from './types.js';

/** What a step's pages add up to: its record, and why it is held or broken (for its reason). */
export interface VisualSeen {
  record: VisualRecord;
  held?: HeldReason;
  /** The step's reason when a page is broken. */
  broken?: string;
}

/**
 * A step is broken when a stable page is broken, held when one changed, and passed otherwise. A page
 * that was unstable before the write (its own noise over hold_over) is advice only: its verdict is
 * in the record and counts for nothing.
 */
export function stepOutcome(pages: VisualPage[], visual: VisualSpec): VisualSeen {
  const stable = pages.filter((p) => !p.unstable);
  const broken = stable.find((p) => p.verdict === 'broken');
  if (broken) return { record: { outcome: 'broken', pages }, broken: `visual: ${brokenText(broken, visual)}` };
  const changed = stable.filter((p) => p.verdict === 'changed').sort((a, b) => (b.changed_percent ?? 0) - (a.changed_percent ?? 0));
  if (changed.length > 0) return { record: { outcome: 'held', pages }, held: heldReason(changed[0]!, visual) };
  const outcome = pages.every((p) => p.verdict === 'not checked') ? 'not checked' : 'passed';
  return { record: { outcome, pages } };
}

function brokenText(page: VisualPage, visual: VisualSpec): string {
  if (page.detail) return `${page.url} after the write: ${page.detail}`;
  return `${page.changed_percent}% of ${page.url} changed (restore_over ${percentText(visual.restore_over)})`;
}

/** The reason a step is held, with what overrides it: the update is on the site already, and stays unless a person restores it. */
function heldReason(page: VisualPage, visual: VisualSpec): HeldReason {
  const percent = page.changed_percent ?? 100;
  return {
    code: 'visual_difference',
    changed_percent: percent,
    url: page.url,
    diff: page.images?.diff ?? null,
    ...(visual.fail_on_hold ? { counts_against_budget: true as const } : {}),
    override: `the update stays; to accept it, nothing to do; to let such a change pass, raise health.visual.hold_over above ${percent}% (now ${percentText(visual.hold_over)}) or hide the part that changes with health.visual.hide`,
  };
}

/** A held step's reason, in words every sink shows: the code first, then what changed and where its diff is. */
export function heldText(held: HeldReason, page: VisualPage | undefined): string {
  const what = page?.detail ?? `${held.changed_percent}% of the page changed`;
  return `${held.code}: ${what} at ${held.url}${held.diff ? ` (diff ${held.diff})` : ''}`;
}
