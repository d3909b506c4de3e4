import { h, type Markup } from './markup.js';
import type { ReportResult } from '../report.js';

/** The pages of a run that looked different after their write (held or broken), with their screenshots. */
export function shownPages(results: readonly ReportResult[]): { result: ReportResult; page: NonNullable<ReportResult['visual']>['pages'][number] }[] {
  return results.flatMap((result) =>
    (result.visual?.pages ?? []).filter((page) => page.images && (page.verdict === 'changed' || page.verdict === 'broken')).map((page) => ({ result, page })),
  );
}

/**
 * Before, after and the diff side by side for every held or broken page. `imageBase` leads from the
 * page's folder to the report's (where the image paths start); each segment is percent-encoded, and
 * the whole goes through `h` as every value does.
 */
export function visualSection(results: readonly ReportResult[], imageBase: string): Markup {
  const shown = shownPages(results);
  if (shown.length === 0) return h``;
  const src = (path: string) => [...(imageBase ? imageBase.split('/') : []), ...path.split('/')].map((s) => (s === '..' ? s : encodeURIComponent(s))).join('/');
  const sections = shown.map(
    ({ result, page }) => h`<section class="site visual" data-step="${result.step_id ?? ''}" data-verdict="${page.verdict}">
      <h3>${result.target.site ?? ''}/${result.target.environment ?? ''}: ${result.status}, ${page.changed_percent ?? 100}% changed${page.unstable ? ' (unstable page: advice only)' : ''}</h3>
      <p class="note">${page.url}${page.detail ? `: ${page.detail}` : ''}${result.held ? h`<br>${result.held.override}` : ''}</p>
      <div class="shots">
        ${(['before', 'after', 'diff'] as const).map(
          (kind) => h`<figure><img src="${src(page.images![kind])}" alt="${kind}" loading="lazy"><figcaption>${kind}</figcaption></figure>`,
        )}
      </div>
    </section>`,
  );
  return h`<h2>Pages that look different (${shown.length})</h2>
    ${sections}`;
}
