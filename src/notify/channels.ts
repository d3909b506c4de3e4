import { UsageError } from '../errors.js';
import type { NotifySetting, PlaybookSettings } from '../playbook/types.js';
import { httpUrl, refName, resolveRef } from '../util/secret-ref.js';

/** Where a run's channels are configured: the command's flags, the playbook's settings, the environment its `${VAR}`s are read from. */
export interface ChannelSource {
  flags: { ping?: string; metricsFile?: string };
  settings: PlaybookSettings | undefined;
  env: Record<string, string | undefined>;
}

export interface Webhook {
  /** `webhook 1`, `webhook 2`: how warnings, the report and doctor name it (never by its URL). */
  channel: string;
  url: URL;
  on: NonNullable<NotifySetting['on']>;
  format: NonNullable<NotifySetting['format']>;
  /** The signing key, read from its variable. */
  secret?: string;
}

/** A secret resolved and parsed, or a usage error naming where it was given, not what it holds. */
function urlOf(text: string, where: string, env: ChannelSource['env']): URL {
  const value = resolveRef(text, env);
  const name = refName(text);
  if (value === undefined || value === '') throw new UsageError(`${where}: environment variable ${name} is not set`);
  const url = httpUrl(value);
  if ('problem' in url) throw new UsageError(`${where}: ${name ? `the value of ${name}` : 'the value given'} ${url.problem}`);
  return url;
}

/** `--ping URL` (or `--ping '${VAR}'`, which keeps it out of `ps`), else `settings.ping`. */
export function pingUrl({ flags, settings, env }: ChannelSource): URL | undefined {
  if (flags.ping !== undefined) return urlOf(flags.ping, '--ping', env);
  return settings?.ping === undefined ? undefined : urlOf(settings.ping, 'settings.ping', env);
}

/** `settings.notify`, each resolved; a secret asked for and not set is a usage error (nothing is sent unsigned). */
export function webhooks({ settings, env }: ChannelSource): Webhook[] {
  return (settings?.notify ?? []).map((n, i) => webhook(n, i, env));
}

/** The `i`th webhook of `settings.notify`, resolved (doctor checks them one by one). */
export function webhook(n: NotifySetting, i: number, env: ChannelSource['env']): Webhook {
  const url = urlOf(n.url, `settings.notify.${i}.url`, env);
  const secret = n.secret === undefined ? undefined : resolveRef(n.secret, env);
  if (n.secret !== undefined && !secret)
    throw new UsageError(`settings.notify.${i}.secret: environment variable ${refName(n.secret)} is not set (a signature is asked for)`);
  return { channel: `webhook ${i + 1}`, url, on: n.on ?? 'failure', format: n.format ?? 'json', ...(secret ? { secret } : {}) };
}

/** `--metrics-file FILE`, else `settings.metrics_file`. */
export function metricsFile({ flags, settings }: ChannelSource): string | undefined {
  return flags.metricsFile ?? settings?.metrics_file;
}

/** The URL with a last path segment added: healthchecks' `/start`, `/0`, `/1`. The query stays. */
export function withSegment(url: URL, segment: string): URL {
  const next = new URL(url);
  next.pathname = `${next.pathname.replace(/\/+$/, '')}/${segment}`;
  return next;
}

/** Whether a webhook is told of a run that ended with `exitCode`; `previous` is the exit code of this playbook's run before (for `change`). */
export function tells(on: Webhook['on'], exitCode: number, previous: number | undefined): boolean {
  if (on === 'always') return true;
  if (on === 'success') return exitCode === 0;
  if (on === 'failure') return exitCode !== 0;
  return previous !== exitCode; // change: the first run known is news too
}
