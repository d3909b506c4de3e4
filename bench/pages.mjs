// Issue 33's measurement: the run page of a report of 10,000 steps renders in ≤ 2 s and ≤ 200 MB
// (the process's peak, report and journal records included), and the page is ≤ 3 MB: the timeline
// draws bands whose marks would be thinner than a pixel as steps in flight.
import { fileURLToPath } from 'node:url';
import { run } from './lib.mjs';

const RENDER = fileURLToPath(new URL('./pages-render.mjs', import.meta.url));

export async function pageRender() {
  const N = 10_000;
  const res = await run(process.execPath, [RENDER, String(N)]);
  if (res.code !== 0) throw new Error(`pages-render exited ${res.code}: ${res.stderr}`);
  const { ms, max_rss_mb, bytes } = JSON.parse(res.stdout);
  const mb = Math.round((bytes / 2 ** 20) * 100) / 100;
  return {
    name: `19. the run page of a report of ${N} steps (3 waves, health checks, 1 in 37 failed)`,
    figures: { render_ms: ms, peak_rss_mb: max_rss_mb, page_mb: mb },
    target: 'renders in ≤ 2 s and ≤ 200 MB; the page ≤ 3 MB',
    met: ms <= 2000 && max_rss_mb <= 200 && bytes <= 3 * 2 ** 20,
  };
}
