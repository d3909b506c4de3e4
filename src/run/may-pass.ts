import { UNDONE, type StepResult } from './types.js';

/**
 * What a write's end says for `retry_later` (settings.retry_backoff, inventory/withheld.ts), as a
 * decision table: the first row that matches decides.
 *
 * | the step's end                                            | verdict     | why                                             |
 * | succeeded                                                 | `succeeded` | clears the item's failures on its environment   |
 * | not failed, not unknown (skipped, held, accepted…)        | none        | nothing was learnt of the write                 |
 * | failed, reason `undone: …`                                | none        | a restore took it back for another write        |
 * | restored, or taken apart by isolation                     | none        | it broke its site: quarantine's to say          |
 * | failed `not_updated` (read back on its old version)       | `may pass`  | a licence, an update server: may be put right   |
 * | failed, site unhealthy before the write                   | `may pass`  | the site was down already                       |
 * | failed, site unhealthy after the write                    | none        | a verdict on the version, not a passing fault   |
 * | unknown (no answer, the operation not seen to end)        | `may pass`  | it may not have reached the service             |
 * | HTTP 5xx, 408 or 429                                      | `may pass`  | the service's own trouble                       |
 * | HTTP 4xx                                                  | `final`     | a refusal: sending it again is refused again    |
 * | its operation failed after the service accepted it        | `may pass`  | the service could not complete what it accepted |
 * | no HTTP answer (network, timeout)                         | `may pass`  | the call never got an answer                    |
 * | anything else (read back another version, verify)         | `final`     | the service did something else: look at it      |
 */
export type WriteVerdict = 'succeeded' | 'may pass' | 'final';

export function writeVerdict(
  r: Pick<StepResult, 'status' | 'http_status' | 'error' | 'reason' | 'restored' | 'isolation' | 'health' | 'attempts' | 'failure'>,
): WriteVerdict | undefined {
  if (r.status === 'succeeded') return 'succeeded';
  if (r.status !== 'failed' && r.status !== 'unknown') return undefined;
  if (r.reason?.startsWith(UNDONE) || r.restored || r.isolation) return undefined;
  if (r.failure?.code === 'not_updated') return 'may pass';
  if (r.health?.outcome === 'unhealthy before') return 'may pass';
  if (r.health?.outcome === 'unhealthy') return undefined;
  // Refused before it left (on_missing_domain: fail, an address that may not be checked): a waiting item would only hide why.
  if (r.status === 'failed' && r.attempts === 0 && r.http_status === null) return undefined;
  if (r.status === 'unknown') return 'may pass';
  const http = r.http_status;
  if (http !== null && (http >= 500 || http === 408 || http === 429)) return 'may pass';
  if (http !== null && http >= 400) return 'final';
  if (r.error?.startsWith('OperationFailed')) return 'may pass';
  return http === null ? 'may pass' : 'final';
}
