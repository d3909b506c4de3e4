import { targetLabel, type ReportResult } from '../report.js';
import { isProblem } from '../../run/types.js';
import { h, type Markup } from './markup.js';
import type { RunTimes, Span } from './spans.js';

/** The chart's width in SVG units: a pixel on a laptop's page, less on a phone (it scales). */
export const CHART_WIDTH = 1000;
const ROW = 10;
const BAND_GAP = 22;
const AXIS = 24;
const MARGIN = 8;
/** An aggregated band: this many columns, each the steps in flight during its time. */
const BUCKETS = CHART_WIDTH / 2;
const AGGREGATE_HEIGHT = 48;
/**
 * Past this many marks on a page, every band is drawn as steps in flight: a mark is then thinner than
 * a pixel in height on a printed page's chart anyway, and each one (a shape and its tooltip) costs
 * some 300 bytes, so 10,000 would make a page of 3 MB.
 */
const MAX_MARKS = 2500;

/** The steps of one band: a task's wave (rollout), or a task without one. */
interface Band {
  label: string;
  steps: { r: ReportResult; span: Span }[];
}

/**
 * Sent steps, grouped by task and wave: tasks in the order the report first lists them, each task's
 * waves in the order they ran (the canary, wave 1, wave 2…), whatever order its environments' steps
 * are listed in (a wave's steps are spread over the plan's environments).
 */
function bandsOf(results: readonly ReportResult[], times: RunTimes): Band[] {
  const bands = new Map<string, Band & { task: number; wave: number }>();
  const tasks: string[] = [];
  for (const r of results) {
    const span = r.step_id === null ? undefined : times.spans.get(r.step_id);
    if (!span) continue;
    const label = r.wave === undefined ? r.task : `${r.task}, ${r.wave === 0 ? 'wave 0 (canary or first)' : `wave ${r.wave}`}`;
    if (!tasks.includes(r.task)) tasks.push(r.task);
    const band = bands.get(label) ?? { label, steps: [], task: tasks.indexOf(r.task), wave: r.wave ?? -1 };
    bands.set(label, band);
    band.steps.push({ r, span });
  }
  return [...bands.values()].sort((a, b) => a.task - b.task || a.wave - b.wave);
}

/** Time to x: the run's first record at 0, its last (or its window's end, when near) at the chart's width. */
function scaleOf(times: RunTimes): { x: (t: number) => number; t0: number; t1: number; windowShown: boolean } {
  const t0 = times.first;
  const runEnd = Math.max(times.last, t0 + 1);
  // A window that closes long after the run would squash the run into a corner: drawn only when near.
  const windowShown = times.windowEnd !== undefined && times.windowEnd - t0 <= 1.25 * (runEnd - t0);
  const t1 = windowShown ? Math.max(runEnd, times.windowEnd!) : runEnd;
  // A margin on the right: a ring or a diamond at the run's last instant is drawn whole.
  return { x: (t) => ((t - t0) / (t1 - t0)) * (CHART_WIDTH - MARGIN), t0, t1, windowShown };
}

/** A mark per step, packed into rows so that marks in one row do not overlap. */
function packRows(steps: Band['steps'], x: (t: number) => number): number[] {
  const rowEnds: number[] = [];
  const order = steps.map((_, i) => i).sort((a, b) => steps[a]!.span.send - steps[b]!.span.send);
  const rows = new Array<number>(steps.length);
  for (const i of order) {
    const { send, end } = steps[i]!.span;
    let row = rowEnds.findIndex((e) => e <= x(send));
    if (row < 0) row = rowEnds.push(0) - 1;
    rowEnds[row] = Math.max(x(end), x(send) + 1) + 1;
    rows[i] = row;
  }
  return rows;
}

/** The median width of the band's marks: under a pixel, the band is drawn as steps in flight instead. */
function medianWidth(steps: Band['steps'], x: (t: number) => number, runEnd: number): number {
  const widths = steps.map(({ span }) => x(span.open ? runEnd : span.end) - x(span.send)).sort((a, b) => a - b);
  return widths[Math.floor(widths.length / 2)] ?? 0;
}

function markOf(step: Band['steps'][number], row: number, y: number, x: (t: number) => number, runEnd: number): Markup {
  const { r, span } = step;
  const end = span.open ? runEnd : span.end;
  const x0 = x(span.send);
  const width = Math.max(x(end) - x0, 1);
  const top = y + row * ROW;
  const tip = `${targetLabel(r)}: ${r.task}${r.role === 'backup' ? ' (backup first)' : ''}, ${r.status}; sent ${clock(span.send)}, ${span.open ? 'not seen to end' : `ended ${clock(span.end)}`}`;
  const parts: Markup[] = [
    h`<rect class="mark s-${r.status}" data-step="${r.step_id}" x="${fixed(x0)}" y="${top}" width="${fixed(width)}" height="${ROW - 1}"
      ><title>${tip}</title></rect
    >`,
  ];
  if (r.health)
    parts.push(
      h`<circle
        class="health health-${r.health.outcome.replace(/ /g, '-')}"
        data-step="${r.step_id}"
        cx="${fixed(x0 + width)}"
        cy="${top + (ROW - 1) / 2}"
        r="3.5"
        ><title>health ${r.health.outcome}</title></circle
      >`,
    );
  if (span.restoredAt !== undefined) {
    const cx = x(span.restoredAt);
    const cy = top + (ROW - 1) / 2;
    parts.push(
      h`<path class="restore" data-step="${r.step_id}" d="M${fixed(cx)} ${fixed(cy - 4.5)}l4.5 4.5l-4.5 4.5l-4.5 -4.5z"
        ><title>restore: ${r.restored?.status ?? ''}</title></path
      >`,
    );
  }
  return h`${parts}`;
}

/** Steps in flight per column, and the failed ones where they ended: what a band of marks thinner than a pixel shows. */
function aggregateOf(band: Band, y: number, x: (t: number) => number, runEnd: number): Markup {
  const inFlight = new Array<number>(BUCKETS).fill(0);
  const failed = new Array<number>(BUCKETS).fill(0);
  const bucket = (t: number) => Math.min(BUCKETS - 1, Math.max(0, Math.floor((x(t) / (CHART_WIDTH - MARGIN)) * BUCKETS)));
  for (const { r, span } of band.steps) {
    const last = bucket(span.open ? runEnd : span.end);
    for (let b = bucket(span.send); b <= last; b++) inFlight[b]!++;
    if (isProblem(r.status)) failed[last]!++;
  }
  const most = Math.max(1, ...inFlight);
  const w = (CHART_WIDTH - MARGIN) / BUCKETS;
  const bars = inFlight.map((n, b) =>
    n === 0
      ? ''
      : h`<rect
          class="in-flight"
          x="${fixed(b * w)}"
          y="${fixed(y + AGGREGATE_HEIGHT * (1 - n / most))}"
          width="${fixed(w)}"
          height="${fixed((AGGREGATE_HEIGHT * n) / most)}"
        />`,
  );
  const fails = failed.map((n, b) =>
    n === 0
      ? ''
      : h`<rect class="ended-failed" x="${fixed(b * w)}" y="${y + AGGREGATE_HEIGHT - 3}" width="${fixed(w)}" height="3"
          ><title>${n} failed, held or unknown</title></rect
        >`,
  );
  return h`<g class="aggregate" data-steps="${band.steps.length}" data-most="${most}">${bars}${fails}</g>`;
}

/**
 * The run as inline SVG: a band per task and wave, a mark per sent step from its send to its
 * operation's end (coloured by status), a ring where its site's health was checked after it, a
 * diamond where its site was restored, and the window's end as a dashed line. A band whose marks
 * would be thinner than a pixel is drawn as the number of steps in flight instead.
 */
export function timelineSvg(results: readonly ReportResult[], times: RunTimes): Markup {
  const { x, t0, t1, windowShown } = scaleOf(times);
  const runEnd = times.last;
  const parts: Markup[] = [];
  let y = 0;
  const bands = bandsOf(results, times);
  const crowded = bands.reduce((n, b) => n + b.steps.length, 0) > MAX_MARKS;
  for (const band of bands) {
    const aggregated = crowded || medianWidth(band.steps, x, runEnd) < 1;
    const label = aggregated ? `${band.label}: ${band.steps.length} steps, drawn as steps in flight (a mark each would be under a pixel)` : band.label;
    parts.push(h`<text x="0" y="${y + 12}">${label}</text>`);
    y += 16;
    if (aggregated) {
      parts.push(aggregateOf(band, y, x, runEnd));
      y += AGGREGATE_HEIGHT + BAND_GAP;
      continue;
    }
    const rows = packRows(band.steps, x);
    const height = (Math.max(...rows) + 1) * ROW;
    parts.push(h`<rect class="band" x="0" y="${y}" width="${CHART_WIDTH}" height="${height}" />`);
    parts.push(h`<g class="marks">${band.steps.map((s, i) => markOf(s, rows[i]!, y, x, runEnd))}</g>`);
    y += height + BAND_GAP;
  }
  const axisY = y;
  parts.push(h`<line class="axis" x1="0" y1="${axisY}" x2="${CHART_WIDTH}" y2="${axisY}" />`);
  for (let i = 0; i <= 4; i++) {
    const t = t0 + ((t1 - t0) * i) / 4;
    const anchor = i === 0 ? 'start' : i === 4 ? 'end' : 'middle';
    parts.push(h`<text x="${fixed(((CHART_WIDTH - MARGIN) * i) / 4)}" y="${axisY + 16}" text-anchor="${anchor}">${clock(t)}</text>`);
  }
  if (windowShown) {
    const wx = fixed(x(times.windowEnd!));
    parts.push(h`<line class="window-end" x1="${wx}" y1="0" x2="${wx}" y2="${axisY}"><title>the window closed ${clock(times.windowEnd!)}</title></line>`);
  }
  const total = axisY + AXIS;
  return h`<svg class="timeline" viewBox="0 0 ${CHART_WIDTH} ${total}" role="img" aria-label="timeline of the run's steps">${parts}</svg>`;
}

/** UTC time of day with seconds: a night's run fits in a day, and the header gives the dates. */
export function clock(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}

/** SVG numbers with two decimals at most: a page of 10,000 marks stays small. */
function fixed(n: number): number {
  return Math.round(n * 100) / 100;
}
