import { lookup } from 'node:dns/promises';
import { accessSync, constants } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SitefleetError } from '../../errors.js';
import { loadPlaybook } from '../../playbook/load.js';
import type { NotifySetting, Playbook } from '../../playbook/types.js';
import { checkOutputs } from '../../util/output-file.js';
import { httpUrl, refName, resolveRef } from '../../util/secret-ref.js';
import type { Io } from '../io.js';
import type { Check } from './doctor-check.js';

/** Where doctor finds the run's channels: the playbook it is given, and the flags a run would take. */
export interface ChannelOptions {
  ping?: string;
  metricsFile?: string;
}

/** The playbook doctor is given, loaded as `validate` loads it (an unset variable is a check's failure, not an exit 2). */
export function doctorPlaybook(file: string, env: Io['env']): { playbook?: Playbook; checks: Check[] } {
  try {
    return { playbook: loadPlaybook(file, { env }), checks: [{ check: 'playbook', status: 'ok', detail: `${file} is valid` }] };
  } catch (error) {
    if (!(error instanceof SitefleetError)) throw error;
    return { checks: [{ check: 'playbook', status: 'fail', detail: `${file}: ${error.message}` }] };
  }
}

/**
 * Each channel a run would tell, checked without telling it: its URL is set and parses, its host
 * resolves, the secret its signature needs is set, the metrics file can be written. Nothing is sent,
 * and no URL (nor host) is shown: they are secrets.
 */
export async function channelChecks(playbook: Playbook | undefined, opts: ChannelOptions, env: Io['env']): Promise<Check[]> {
  const checks: Check[] = [];
  const ping = opts.ping ?? playbook?.settings.ping;
  if (ping !== undefined) checks.push(await urlCheck('ping', ping, opts.ping !== undefined ? '--ping' : 'settings.ping', env));
  for (const [i, hook] of (playbook?.settings.notify ?? []).entries()) checks.push(await webhookCheck(i, hook, env));
  const metrics = opts.metricsFile ?? playbook?.settings.metrics_file;
  if (metrics !== undefined) checks.push(metricsCheck(metrics));
  return checks;
}

async function urlCheck(check: string, text: string, where: string, env: Io['env']): Promise<Check> {
  const name = refName(text);
  const source = name ? `${where} (${name})` : where;
  const value = resolveRef(text, env);
  if (!value) return { check, status: 'fail', detail: `${source}: environment variable ${name} is not set` };
  const url = httpUrl(value);
  if ('problem' in url) return { check, status: 'fail', detail: `${source}: the value ${url.problem}` };
  try {
    await lookup(url.hostname);
  } catch (error) {
    return { check, status: 'fail', detail: `${source}: its host does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})` };
  }
  return { check, status: 'ok', detail: `${source}: an ${url.protocol.slice(0, -1)} URL whose host resolves (nothing sent)` };
}

async function webhookCheck(i: number, hook: NotifySetting, env: Io['env']): Promise<Check> {
  const check = `webhook ${i + 1}`;
  const url = await urlCheck(check, hook.url, `settings.notify.${i}.url`, env);
  if (url.status !== 'ok') return url;
  const secret = hook.secret === undefined ? undefined : refName(hook.secret);
  if (secret !== undefined && !env[secret])
    return { check, status: 'fail', detail: `settings.notify.${i}.secret: environment variable ${secret} is not set (a signature is asked for)` };
  return { ...url, detail: `${url.detail}; ${hook.format ?? 'json'}, on ${hook.on ?? 'failure'}${secret ? `, signed with ${secret}` : ''}` };
}

function metricsCheck(path: string): Check {
  const check = 'metrics file';
  try {
    accessSync(dirname(resolve(path)), constants.W_OK);
    checkOutputs([{ flag: 'metrics file', path, kind: 'metrics' }], []);
    return { check, status: 'ok', detail: `${resolve(path)} can be written` };
  } catch (error) {
    return { check, status: 'fail', detail: `${resolve(path)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
}
