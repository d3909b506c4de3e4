// Preloaded into a CLI process the bench measures (`node --import ./max-rss.mjs …`): at its exit it
// writes its peak resident set size, in MB, to the file SITEFLEET_BENCH_MAX_RSS names, so a
// command that logs no memory figure of its own (`plan`) can be held to a memory bar.
import { writeFileSync } from 'node:fs';

const file = process.env.SITEFLEET_BENCH_MAX_RSS;
if (file) process.on('exit', () => writeFileSync(file, String(Math.round(process.resourceUsage().maxRSS / 1024))));
