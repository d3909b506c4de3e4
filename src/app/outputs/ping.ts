import type { Delivery } from '../../notify/deliver.js';
import type { RunEnd } from '../../notify/run-end.js';
import type { OutputStart, RunOutput, Undelivered } from './output.js';
import { endOfAbandoned, endOfFinished, policyOf, sourceOf } from './channel-shared.js';

/**
 * `--ping URL` or `settings.ping`: a dead-man's switch in healthchecks.io's convention (its
 * self-hosted version serves the same): `URL/start` before the fleet is read, `URL/<exit code>` at
 * the end (0 is success), so a monitor alerts both when a run fails and when none ran. The end
 * ping's body is one line (healthchecks shows it beside the ping): the playbook, the exit code, the counts.
 */
export const ping: RunOutput = {
  name: 'ping',
  option: {
    flags: '--ping <url>',
    description:
      "ping a dead-man's switch (healthchecks.io style): URL/start as the run starts, URL/<exit code> as it ends; '${VAR}' reads it from the environment",
  },
  async files(start) {
    await urlOf(start); // a URL that does not parse is exit 2 when the command starts, before anything is sent
    return [];
  },
  async start(started) {
    const url = await urlOf(started);
    if (!url) return [];
    return undelivered('start', await send(url, 'start', '', started.env));
  },
  async write(finished) {
    const url = finished.started && (await urlOf(finished));
    return url ? ended(url, endOfFinished(finished), finished.env) : [];
  },
  async abandon(abandoned) {
    const url = await urlOf(abandoned.started);
    return url ? ended(url, endOfAbandoned(abandoned), abandoned.started.env) : [];
  },
};

async function urlOf(start: OutputStart): Promise<URL | undefined> {
  const { pingUrl } = await import('../../notify/channels.js');
  return pingUrl(sourceOf(start));
}

async function send(url: URL, segment: string, body: string, env: OutputStart['env']): Promise<Delivery> {
  const [{ deliver }, { withSegment }] = await Promise.all([import('../../notify/deliver.js'), import('../../notify/channels.js')]);
  return deliver(withSegment(url, segment), { method: 'POST', body, headers: { 'content-type': 'text/plain; charset=utf-8' } }, await policyOf(env));
}

/** `URL/<exit code>`, its body the line healthchecks shows beside the ping. */
async function ended(url: URL, end: RunEnd, env: OutputStart['env']): Promise<Undelivered[]> {
  const { countsText, exitMeaning } = await import('../../notify/run-end.js');
  const line = `sitefleet ${end.name}: exit ${end.exitCode} (${exitMeaning(end.exitCode)})${end.report ? `: ${countsText(end.report.value.summary)}` : ''}${end.error ? `: ${end.error}` : ''}\n`;
  return undelivered('end', await send(url, String(end.exitCode), line, env));
}

function undelivered(at: Undelivered['at'], delivery: Delivery): Undelivered[] {
  return delivery.ok ? [] : [{ channel: 'ping', at, tries: delivery.tries, error: delivery.error }];
}
