import type { Webhook } from '../../notify/channels.js';
import type { RunEnd } from '../../notify/run-end.js';
import type { OutputStart, RunOutput, Started, Undelivered } from './output.js';
import { endOfAbandoned, endOfFinished, policyOf, sourceOf } from './channel-shared.js';

/**
 * `settings.notify`: each webhook told of the run's end when its `on` says so, after the report is
 * written. `format: json` posts the run's summary; `format: slack` Slack's incoming-webhook message.
 * With `secret`, `X-Sitefleet-Signature: sha256=<hex HMAC-SHA256 of the exact body>`; the body holds
 * the time it was sent, so a receiver can refuse a replay.
 */
export const webhooks: RunOutput = {
  name: 'webhooks',
  async files(start) {
    await hooksOf(start); // a URL that does not parse, or a secret not set, is exit 2 before anything is sent
    return [];
  },
  async write(finished) {
    return finished.started ? tell(finished.started, endOfFinished(finished)) : [];
  },
  async abandon(abandoned) {
    return tell(abandoned.started, endOfAbandoned(abandoned));
  },
};

async function hooksOf(start: OutputStart): Promise<Webhook[]> {
  if (!start.playbook?.settings.notify) return [];
  const { webhooks } = await import('../../notify/channels.js');
  return webhooks(sourceOf(start));
}

/** Posts to each webhook whose `on` holds; `change` compares with this playbook's previous run on this machine, then records this one. */
async function tell(started: Started, end: RunEnd): Promise<Undelivered[]> {
  const hooks = await hooksOf(started);
  if (hooks.length === 0) return [];
  const [{ tells }, { readLastExit, writeLastExit }] = await Promise.all([import('../../notify/channels.js'), import('../../notify/last-exit.js')]);
  const watchesChange = hooks.some((h) => h.on === 'change');
  const previous = watchesChange ? readLastExit(started.stateDir, end.company, end.name) : undefined;
  const failed: Undelivered[] = [];
  let changeUntold = false;
  for (const hook of hooks) {
    if (!tells(hook.on, end.exitCode, previous)) continue;
    const undelivered = await post(hook, end, started.env);
    failed.push(...undelivered);
    changeUntold ||= hook.on === 'change' && undelivered.length > 0;
  }
  // A change not delivered stays a change: the next run compares with the exit code its receiver last heard of.
  if (watchesChange && !changeUntold)
    writeLastExit(started.stateDir, end.company, end.name, { exit_code: end.exitCode, run_id: end.runId, at: end.finishedAt.toISOString() });
  return failed;
}

async function post(hook: Webhook, end: RunEnd, env: OutputStart['env']): Promise<Undelivered[]> {
  const [{ deliver }, { jsonSummary }, { slackMessage }, { signature }, { jsonText }] = await Promise.all([
    import('../../notify/deliver.js'),
    import('../../notify/run-end.js'),
    import('../../notify/slack.js'),
    import('../../notify/sign.js'),
    import('../../util/safe-text.js'),
  ]);
  const sentAt = new Date();
  const body = jsonText(hook.format === 'slack' ? slackMessage(end, sentAt) : jsonSummary(end, sentAt));
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (hook.secret) headers['x-sitefleet-signature'] = signature(hook.secret, body);
  const delivery = await deliver(hook.url, { method: 'POST', body, headers }, await policyOf(env));
  return delivery.ok ? [] : [{ channel: hook.channel, at: 'end', tries: delivery.tries, error: delivery.error }];
}
