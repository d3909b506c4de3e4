import type { InputProblem } from '../../errors.js';
import { durationSchema, LONGEST, parseDuration } from '../../util/duration.js';

/**
 * `health.visual` as the playbook gives it: `true` for every default, or an object. Before a guarded
 * write the pages are screenshot twice (`gap` apart: what differs is the page's own noise, masked);
 * after it, again, and compared.
 */
export interface VisualInput {
  /** Paths of more pages to look at, under the health URL (`/shop/` is `<health url>shop/`); the health URL itself always is. */
  pages?: string[];
  /** CSS selectors hidden before each screenshot: sliders, ads, dates. */
  hide?: string[];
  /** A page changed by more than this share holds the step (`held`): the update stays, a person looks. @default "1%" */
  hold_over?: string;
  /** A page changed by more than this share (or blank, or half its height gone or added) is broken: `on_broken` applies. @default "25%" */
  restore_over?: string;
  /** The window screenshots are taken in. @default { width: 1280, height: 800 } */
  viewport?: { width: number; height: number };
  /** Only the top of a page is compared, this many pixels. @default 3000 */
  max_height?: number;
  /** Between the two screenshots of a page before the write, and before a changed page is shot once more after it. @default "3s" */
  gap?: string;
  /** A held step counts against the failure budget as a failed one does. @default false */
  fail_on_hold?: boolean;
}

/** `health.visual` with every default filled in: what the plan carries. Shares are fractions (0.01 for 1%). */
export interface VisualSpec {
  pages: string[];
  hide: string[];
  hold_over: number;
  restore_over: number;
  width: number;
  height: number;
  max_height: number;
  gap_ms: number;
  /** Present only when asked for. */
  fail_on_hold?: true;
}

export const VISUAL_DEFAULTS = { hold_over: '1%', restore_over: '25%', width: 1280, height: 800, max_height: 3000, gap: '3s' } as const;

/** One page gets this long to load and be shot; a page slower than that is not one a person waits for either. */
export const PAGE_TIMEOUT_MS = 30_000;

const SHARE = '^(100|[0-9]{1,2})(\\.[0-9]+)?%$';

/** The JSON Schema of `health.visual`. */
export function visualSchema(): Record<string, unknown> {
  const share = (what: string) => ({ type: 'string', pattern: SHARE, description: what });
  return {
    description: 'screenshot each checked page before and after the write and compare them (needs Chromium); `true` for the defaults',
    oneOf: [
      { const: true },
      {
        type: 'object',
        additionalProperties: false,
        properties: {
          pages: {
            type: 'array',
            maxItems: 20,
            items: { type: 'string', pattern: '^/(?!/)[^\\s?#\\\\]*$', not: { pattern: '(^|/)\\.\\.?(/|$)' } },
            description: 'more pages to look at, as paths under the health URL (`/shop/`); the health URL itself always is',
          },
          hide: { type: 'array', items: { type: 'string', minLength: 1, pattern: '^[^{}]*$' }, description: 'CSS selectors hidden before each screenshot' },
          hold_over: share(`a page changed by more than this share holds the step (held), default ${VISUAL_DEFAULTS.hold_over}`),
          restore_over: share(
            `a page changed by more than this share, blank, or half its height gone counts as broken (on_broken), default ${VISUAL_DEFAULTS.restore_over}`,
          ),
          viewport: {
            type: 'object',
            additionalProperties: false,
            required: ['width', 'height'],
            properties: { width: { type: 'integer', minimum: 320, maximum: 3840 }, height: { type: 'integer', minimum: 240, maximum: 2160 } },
            description: `the browser window, default ${VISUAL_DEFAULTS.width}x${VISUAL_DEFAULTS.height}`,
          },
          max_height: {
            type: 'integer',
            minimum: 240,
            maximum: 10000,
            description: `compare the top of each page, this many pixels, default ${VISUAL_DEFAULTS.max_height}`,
          },
          gap: durationSchema(LONGEST.visualGap, `between two screenshots of a page, default ${VISUAL_DEFAULTS.gap}`),
          fail_on_hold: { type: 'boolean', description: 'a held step counts against the failure budget (default false: a problem to look at, not a failure)' },
        },
      },
    ],
  };
}

/** `"2.5%"` → 0.025. */
function share(text: string): number {
  return Number(text.replace('%', '')) / 100;
}

/** The spec `health.visual` stands for, or its problems (paths relative to `visual`). */
export function resolveVisual(input: true | VisualInput): { spec?: VisualSpec; problems: InputProblem[] } {
  const given = input === true ? {} : input;
  const hold = share(given.hold_over ?? VISUAL_DEFAULTS.hold_over);
  const restore = share(given.restore_over ?? VISUAL_DEFAULTS.restore_over);
  if (restore <= hold)
    return { problems: [{ path: 'restore_over', message: `must be more than hold_over (${given.hold_over ?? VISUAL_DEFAULTS.hold_over})` }] };
  return {
    problems: [],
    spec: {
      pages: given.pages ?? [],
      hide: given.hide ?? [],
      hold_over: hold,
      restore_over: restore,
      width: given.viewport?.width ?? VISUAL_DEFAULTS.width,
      height: given.viewport?.height ?? VISUAL_DEFAULTS.height,
      max_height: given.max_height ?? VISUAL_DEFAULTS.max_height,
      gap_ms: parseDuration(given.gap ?? VISUAL_DEFAULTS.gap)!,
      ...(given.fail_on_hold === true ? { fail_on_hold: true as const } : {}),
    },
  };
}

/** The pages one environment's check looks at: its health URL, then each path under it. */
export function visualPages(spec: VisualSpec, healthUrl: string): string[] {
  const base = healthUrl.endsWith('/') ? healthUrl : `${healthUrl}/`;
  return [healthUrl, ...spec.pages.map((path) => new URL(`./${path.slice(1)}`, base).href)];
}

/** `0.032` → `3.2%`: a share as the report and the messages show it. */
export function percentText(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10}%`;
}
