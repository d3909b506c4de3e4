import type { EndpointName } from '../api/endpoints.js';
import type { SimOperation } from './operations.js';

/**
 * How the simulator answers where the spec is silent. `spec` is the shape the spec suggests (HTTP
 * codes carry operation outcomes). `real` follows what public clients and recorded answers of the real
 * service show (shared/real-service-notes.md):
 * - terminal operation states answered with HTTP 200 and the outcome in the body's `status`;
 * - a failed operation nests its reason: its body is `{status: 500, message, data}` with always the
 *   same `message` (OPERATION_FAILED_MESSAGE) and `data` `{status: 500, message: REASON, data: null}`;
 * - a finished operation carries what it produced in `data` (`{idEnv}` after creating or cloning an
 *   environment, `{idSite}` after creating a site, `{result}` after a WP-CLI command that printed
 *   something, see wp-cli-output.ts), `null` otherwise;
 * - WP-CLI operations are named `cli:run-wp-cli-<uuid>`, and accepted with the recorded message;
 * - the SSH config is flat, `{name, host, port, user, ssh_command}` with `port` a string;
 * - 401 says `Unauthenticated.`;
 * - adding a domain already in use is accepted, and its operation fails with the recorded reason;
 * - a separate window for creating calls, and one for log reads; new operations unknown (404) for a few seconds;
 * - at most five manual backups an environment: a sixth is refused (400) and nothing is removed for you;
 * - `theme_update: null` where no update is available, and `plugin_update: null` likewise in the
 *   plugin listing (the notes call it the theme listing's twin); the vendor document's name for the
 *   domain list's DNS flag; theme bulk updates answered 200, as the vendor document says.
 *
 * Plugins in both profiles: the bulk update answers 200 with its operation (the notes' only answer;
 * `pluginBulkOperationId: false` for the one without), the pinned one 202. The `real` profile keeps the
 * plugin listing's environment ids and no listing lag: the changelog sample that shows no id is an
 * excerpt of the theme listing's twin, whose entries have one, and the staff's "can be cached for up
 * to 12 hours" says it may lag, not by how much. Both are options (`pluginListing: 'no-ids'`,
 * `pluginListingLagMs`), so that a test says which real behaviour it is about.
 */
export type SimProfile = 'spec' | 'real';
export const SIM_PROFILES: readonly SimProfile[] = ['spec', 'real'];

/** The creating calls a `real` simulator allows per period of its general window. */
const REAL_CREATE_LIMIT = 5;
/** The log reads a `real` simulator allows per period of its general window (real-service-notes.md, "Limits"). */
const REAL_LOGS_LIMIT = 35;
/** The manual backups a `real` simulator keeps per environment (real-service-notes.md, "Backups and restores"). */
export const REAL_MANUAL_BACKUP_LIMIT = 5;
/** How long a new operation answers 404 on a `real` simulator, unless told otherwise. */
const REAL_VISIBLE_AFTER_MS = 2000;

/**
 * What a profile sets unless the options say otherwise: the `real` one a creation window of 5 and a
 * logs window of 35 per period of the general window (a minute when there is none), 2 s of
 * invisible operations, and five manual backups an environment.
 */
export function profileDefaults(
  profile: SimProfile,
  rate: { limit: number; periodMs: number } | undefined,
): {
  createRate?: { limit: number; periodMs: number };
  logsRate?: { limit: number; periodMs: number };
  visibleAfterMs: number;
  manualBackupLimit?: number;
} {
  if (profile !== 'real') return { visibleAfterMs: 0 };
  const periodMs = rate?.periodMs ?? 60_000;
  return {
    createRate: { limit: REAL_CREATE_LIMIT, periodMs },
    logsRate: { limit: REAL_LOGS_LIMIT, periodMs },
    visibleAfterMs: REAL_VISIBLE_AFTER_MS,
    manualBackupLimit: REAL_MANUAL_BACKUP_LIMIT,
  };
}

export interface Answer {
  status: number;
  body: unknown;
}

/** The outer message of a failed operation on the real service, the same in every recording: the reason is in `data`. */
export const OPERATION_FAILED_MESSAGE = 'Operation failed! Please refer to `data` for more details.';

/** `GET /operations/{id}` for an operation the simulator knows and shows. */
export function operationAnswer(profile: SimProfile, op: SimOperation): Answer {
  if (op.state === 'in_progress') return { status: 202, body: { status: 202, message: op.message, operation_id: op.id } };
  const code = op.state === 'succeeded' ? 200 : 500;
  if (profile !== 'real') return { status: code, body: { status: code, message: op.message, data: { operation_id: op.id } } };
  if (op.state === 'succeeded') return { status: 200, body: { status: 200, message: op.message, data: op.data } };
  return { status: 200, body: { status: 500, message: OPERATION_FAILED_MESSAGE, data: { status: 500, message: op.message, data: null } } };
}

/** The id of a new operation: the spec's `<kind>-<uuid>`, but a real WP-CLI operation is `cli:run-wp-cli-<uuid>`. */
export function operationId(profile: SimProfile, endpoint: EndpointName, kind: string, uuid: string): string {
  return profile === 'real' && endpoint === 'runWpCliCommand' ? `cli:run-wp-cli-${uuid}` : `${kind}-${uuid}`;
}

/** The answer that accepts an asynchronous call. */
export function acceptedAnswer(profile: SimProfile, endpoint: EndpointName, kind: string, id: string): Answer {
  if (endpoint === 'bulkUpdatePlugins') return { status: 200, body: { operation_id: id, message: 'Successfully updated WP plugins', status: 200 } };
  if (profile === 'real' && endpoint === 'bulkUpdateThemes') {
    return { status: 200, body: { message: 'Successfully updated WP themes', status: 200, operation_id: id } };
  }
  if (profile === 'real' && endpoint === 'runWpCliCommand') {
    const message = 'Running WP-CLI command in progress. Use the operation_id to check the status.';
    return { status: 202, body: { operation_id: id, message, status: 202 } };
  }
  return { status: 202, body: { message: `${kind} in progress`, status: 202, operation_id: id } };
}

/** What a request without the right bearer token is told. */
export function unauthenticatedMessage(profile: SimProfile): string {
  return profile === 'real' ? 'Unauthenticated.' : 'Unauthorized: missing or invalid API key';
}

/** A synchronous answer, reshaped as the real service's where they differ. */
export function syncAnswer(profile: SimProfile, endpoint: EndpointName, body: unknown): unknown {
  if (profile !== 'real') return body;
  if (endpoint === 'listThemes') return withNullUpdates(body, 'theme');
  if (endpoint === 'listPlugins') return withNullUpdates(body, 'plugin');
  if (endpoint === 'listDomains') return withCloudflareFlag(body);
  if (endpoint === 'getSshConfig') return flatSshConfig(body);
  return body;
}

type Json = Record<string, unknown>;

function withNullUpdates(body: unknown, kind: 'theme' | 'plugin'): unknown {
  const listing = ((body as Json).company as Json)[`${kind}s`] as Json;
  const items = (listing.items as Json[]).map((item) => ({
    ...item,
    environments: (item.environments as Json[]).map((e) =>
      e[`${kind}_update`] === 'available'
        ? e
        : { ...e, [`${kind}_update`]: null, [`${kind}_update_version`]: null, [`is_${kind}_update_version_vulnerable`]: null },
    ),
  }));
  return { company: { [`${kind}s`]: { ...listing, items } } };
}

function withCloudflareFlag(body: unknown): unknown {
  const env = (body as Json).environment as Json;
  const site_domains = (env.site_domains as Json[]).map(({ uses_provider_dns, ...rest }) => ({ ...rest, uses_cloudflare_dns: uses_provider_dns }));
  return { environment: { ...env, site_domains } };
}

/** The recorded SSH config: the connection fields alone, without the spec's `site` object. */
function flatSshConfig(body: unknown): unknown {
  const { name, host, port, user, ssh_command } = body as Json;
  return { name, host, port, user, ssh_command };
}
