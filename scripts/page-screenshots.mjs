// npm run screenshots: the two pages `sitefleet report` writes, from the demo's own runs (the demo
// starts its simulator in-process), photographed in the machine's Chromium (Debian's `chromium`,
// found as `--pdf` finds it) into docs/images/ for docs/pages.md. Sends nothing anywhere else.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_FLAGS, findChromium, NO_SANDBOX } from '../dist/util/chromium.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const demo = spawnSync(process.execPath, ['dist/cli/main.js', 'demo'], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
if (demo.status !== 0) throw new Error(`the demo exited ${demo.status}:\n${demo.stderr}`);
const pageOf = (label) => {
  const match = new RegExp(`^${label}: (\\S+\\.html)$`, 'm').exec(demo.stdout);
  if (!match) throw new Error(`the demo printed no "${label}" page`);
  return match[1];
};
const shots = [
  { file: pageOf("the safe rollout's page"), out: 'docs/images/run-page.png', height: 1250 },
  { file: pageOf('the maintenance record of every run'), out: 'docs/images/record-page.png', height: 1400 },
];
mkdirSync(new URL('../docs/images/', import.meta.url), { recursive: true });
const { chromium } = await import('playwright-core');
const browser = await chromium.launch({ executablePath: findChromium(process.env), args: [...CHROMIUM_FLAGS, NO_SANDBOX] });
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  for (const shot of shots) {
    await page.goto(`file://${shot.file}`, { waitUntil: 'load' });
    await page.screenshot({ path: `${root}/${shot.out}`, clip: { x: 0, y: 0, width: 1100, height: shot.height } });
    process.stdout.write(`${shot.out} (from ${shot.file})\n`);
  }
} finally {
  await browser.close();
}
