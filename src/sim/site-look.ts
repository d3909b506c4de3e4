/**
 * How a simulated site's front page looks: a page of fixed sizes (header, hero, three columns,
 * footer), so that what an update changes is a known share of it. A theme version may change it a
 * little (`tint`: the header's colour, in place), shift it (`notice`: a 48 px bar above the hero,
 * which moves everything under it down), break its layout (`unstyled`: its style sheet gone, as when
 * a theme's CSS fails to load) or show nothing (`blank`: a white page, as a fatal error caught by a
 * theme shows). A site with a carousel shows the next slide at each load: noise a visual check must
 * mask; a wide slider (the whole hero) is more noise than `hold_over`, and nobody listed it in `hide:`.
 */
export type SiteLook = 'tint' | 'notice' | 'unstyled' | 'blank';

export const SITE_LOOKS: readonly SiteLook[] = ['tint', 'notice', 'unstyled', 'blank'];

/** A site's moving parts: the small carousel's slide, the wide slider's. */
export interface SiteMotion {
  slide?: number;
  wide?: number;
}

/** Slide colours, each unlike the next at every pixel. */
const SLIDES = ['#c62828', '#2e7d32', '#1565c0', '#6a1b9a'];

const STYLE = `body{margin:0;font:16px/1.5 sans-serif;background:#fff;color:#222}
header{height:80px;background:#23395d;color:#fff;padding:0 40px;display:flex;align-items:center}
header h1{margin:0;font-size:28px}
.notice{height:48px;background:#ffd54f;margin:0;padding:0 40px;line-height:48px}
.hero{height:360px;background:#e3eaf3;padding:40px;box-sizing:border-box;position:relative}
.slider{position:absolute;left:0;right:0;top:0;height:300px}
.slide{position:absolute;right:40px;bottom:40px;width:200px;height:50px;color:#fff;text-align:center;line-height:50px}
.cols{display:flex;gap:24px;padding:24px 40px}
.cols article{flex:1;height:400px;background:#f4f4f4;padding:16px;box-sizing:border-box}
footer{height:200px;background:#333;color:#ccc;padding:24px 40px;box-sizing:border-box}`;

/** The header's colour under `tint`. */
const TINT = 'header{background:#5d2339}';

/** The page's body and style: the name escaped by the caller. */
export function lookedPage(name: string, look: SiteLook | undefined, motion: SiteMotion = {}): { style: string; body: string } {
  if (look === 'blank') return { style: 'body{margin:0;background:#fff}', body: '' };
  const notice = look === 'notice' ? '<p class="notice">Free shipping on every order this week</p>' : '';
  const { slide, wide } = motion;
  const slider = wide === undefined ? '' : `<div class="slider" style="background:${SLIDES[wide % SLIDES.length]}"></div>`;
  const carousel =
    slide === undefined ? '' : `<div class="slide" style="background:${SLIDES[slide % SLIDES.length]}">Slide ${(slide % SLIDES.length) + 1}</div>`;
  const columns = ['Latest posts', 'Our services', 'Contact'].map((t) => `<article><h2>${t}</h2><p>Just another WordPress site</p></article>`).join('');
  const body = `<header><h1>${name}</h1></header>${notice}<section class="hero">${slider}<h2>Welcome</h2><p>Just another WordPress site</p>${carousel}</section><div class="cols">${columns}</div><footer>© ${name}</footer>`;
  return { style: look === 'unstyled' ? '' : look === 'tint' ? `${STYLE}\n${TINT}` : STYLE, body };
}
