import { HTML_HEAD } from '../../util/output-file.js';
import { h, Markup, type Part } from './markup.js';

/**
 * What the page may load: nothing (`default-src 'none'`), but its own inline style sheet and images
 * embedded as `data:` (a logo). No script source is allowed at all, so even markup that slipped
 * through could run nothing; no base or form target either. The page prints, mails and archives.
 */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** The same, for a run page that shows screenshots kept beside its report (health.visual): images of its own place too, still no script. */
export const PAGE_CSP_WITH_IMAGES = PAGE_CSP.replace('img-src data:', "img-src data: 'self'");

/**
 * The page's style: system fonts, one column that fits a phone (wide tables scroll on their own),
 * status colours that print (`print-color-adjust`), and A4 pages without a figure or a row cut in two.
 * Text wraps between words: a token breaks only where it is longer than its line
 * (`overflow-wrap: break-word`, which leaves a table's columns as wide as their longest word; `anywhere`
 * would let a column shrink until "Plugin updates" splits inside a word). A site's name stays on one
 * line (its hyphens are no place to break it); commands and log lines (`code`, `pre`) are the long
 * tokens that may break anywhere.
 */
const STYLE = `
:root { --ok: #2e7d32; --accepted: #1565c0; --failed: #c62828; --unknown: #ef8f00; --skipped: #9e9e9e; --held: #8d6e00; --planned: #6a1b9a; --ink: #1c1c1c; --muted: #5f6368; --line: #dadce0; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 64rem; padding: 1rem; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #fff; overflow-wrap: break-word; }
header.page { display: flex; gap: 1rem; align-items: center; border-bottom: 2px solid var(--ink); padding-bottom: .5rem; margin-bottom: 1rem; }
header.page img { max-height: 3.5rem; max-width: 12rem; }
h1 { font-size: 1.5rem; margin: 0; } h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; border-bottom: 1px solid var(--line); } h3 { font-size: 1.05rem; margin: 1rem 0 .25rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; } dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; } th { white-space: nowrap; } td.st, td.name { white-space: nowrap; } th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line); } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: .75rem 0; break-inside: avoid; } figcaption { font-weight: 600; }
svg { display: block; width: 100%; height: auto; } svg text { font: 11px system-ui, sans-serif; fill: var(--ink); }
.s-held { fill: var(--held); } .k.s-held { background: var(--held); }
.shots { display: grid; grid-template-columns: repeat(3, 1fr); gap: .5rem; } .shots figure { margin: 0; } .shots img { width: 100%; height: auto; border: 1px solid var(--line); }
.s-succeeded { fill: var(--ok); } .s-accepted { fill: var(--accepted); } .s-failed { fill: var(--failed); } .s-unknown { fill: var(--unknown); } .s-skipped { fill: var(--skipped); } .s-planned { fill: var(--planned); }
.k { display: inline-block; width: .7em; height: .7em; margin-right: .25em; border-radius: 2px; }
.k.s-succeeded { background: var(--ok); } .k.s-accepted { background: var(--accepted); } .k.s-failed { background: var(--failed); } .k.s-unknown { background: var(--unknown); } .k.s-skipped { background: var(--skipped); } .k.s-planned { background: var(--planned); }
.health-healthy { fill: #fff; stroke: var(--ok); stroke-width: 1.5; } .health-unhealthy, .health-unhealthy-before { fill: #fff; stroke: var(--failed); stroke-width: 1.5; } .health-not-checked { fill: #fff; stroke: var(--skipped); stroke-width: 1.5; }
.restore { fill: #fff; stroke: var(--accepted); stroke-width: 1.5; } .window-end { stroke: var(--failed); stroke-dasharray: 4 3; } .axis { stroke: var(--line); } .band { fill: #f6f7f9; }
.in-flight { fill: var(--accepted); opacity: .55; } .ended-failed { fill: var(--failed); }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f7f9; padding: .4rem .6rem; margin: .25rem 0; font-size: .85rem; max-height: 20rem; overflow: auto; }
code { background: #f6f7f9; padding: 0 .25rem; overflow-wrap: anywhere; }
.note { color: var(--muted); } footer.page { margin-top: 2rem; padding-top: .5rem; border-top: 1px solid var(--line); color: var(--muted); font-size: .85rem; }
@media (max-width: 40rem) { body { padding: .5rem; font-size: 14px; } header.page { flex-direction: column; align-items: flex-start; } }
@page { size: A4; margin: 14mm 12mm; }
@media print { body { max-width: none; padding: 0; font-size: 10.5pt; } * { -webkit-print-color-adjust: exact; print-color-adjust: exact; } .scroll { overflow: visible; } pre { max-height: none; } tr, figure, section.site { break-inside: avoid; } h2, h3 { break-after: avoid; } }
`;

export interface PageParts {
  title: string;
  /** A logo as a `data:` URL (see logo.ts), shown beside the title. */
  logo?: string;
  /** Lines under the title. */
  subtitle?: Part;
  body: Part;
  footer?: string;
  /** The page shows image files beside it (a run's screenshots): its policy lets it load those. */
  localImages?: true;
}

/** One self-contained page: no script, nothing loaded from anywhere (see PAGE_CSP). */
export function htmlDocument(parts: PageParts): string {
  // The head begins as output-file.ts knows a sitefleet page by (HTML_HEAD): one text, written here and recognised there.
  const page: Markup = h`${new Markup(HTML_HEAD)} content="${parts.localImages ? PAGE_CSP_WITH_IMAGES : PAGE_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${parts.title}</title>
<style>${STYLE_MARKUP}</style>
</head>
<body>
<header class="page">${parts.logo ? h`<img src="${parts.logo}" alt="logo">` : ''}<div><h1>${parts.title}</h1>${parts.subtitle ?? ''}</div></header>
<main>
${parts.body}
</main>
<footer class="page">${parts.footer ? h`<p>${parts.footer}</p>` : ''}<p>Written by sitefleet. This page loads nothing and runs no script.</p></footer>
</body>
</html>
`;
  return page.text;
}

/** The style sheet is this module's own constant: it is put in as it is (escaping would break its quotes). */
const STYLE_MARKUP = new Markup(STYLE);
