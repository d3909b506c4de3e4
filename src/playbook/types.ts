import type { RestoreSettings } from '../actions/backups-restore.js';
import type { DailyWindow } from '../util/time-window.js';
import type { WithBlock } from '../actions/action.js';
import type { HealthSpec } from '../health/spec.js';

export type Globs = string | string[];

export interface Selector {
  site?: Globs;
  environment?: Globs;
  /** Has an item of this kind (a selector field named for the kind, as kinds.ts names them) with a matching slug installed. */
  theme?: Globs;
  plugin?: Globs;
  /** WordPress: runs a version matching one of these (`6.4*`). */
  core?: Globs;
  ids?: string[];
  exclude?: Selector;
}

/** `all`, the name of a set under `targets:`, or a selector. */
export type TargetRef = string | Selector;

export interface Rollout {
  /** Targets that go first, alone. */
  canary?: number;
  /** Cumulative shares of the targets, e.g. ["10%", "50%", "100%"]. */
  waves?: string[];
  /** Wait between waves, e.g. `5m`. */
  pause?: string;
  /** Each site's update runs on its staging environment first; live is updated (rerun, never pushed) on a later run. */
  staging_first?: boolean;
  /** With staging_first: how long staging runs a version, no failure recorded, before live takes it. @default "0s" */
  soak?: string;
  /** With staging_first: a site without a staging environment is held (`hold`) or updated on live directly (`live`). @default "hold" */
  no_staging?: 'hold' | 'live';
  /** With staging_first: the name (a glob) of a site's staging environment. @default "staging" */
  staging?: string;
  /**
   * With staging_first: where the version staging soaked is flagged vulnerable and a newer one the
   * listing does not flag is offered, live takes the newer one unstaged (staging too, the same run),
   * the step and the report naming the bypass. Without it live waits for the newer one's soak. @default false
   */
  security_bypass?: boolean;
  /**
   * The name of an earlier task that updates another kind of item: on each environment both write to,
   * this task's writes join that task's: one backup before both, one look after both, one restore of
   * both when the site broke. This task's guards are that task's (plan/together.ts).
   */
  together?: string;
}

export interface Task {
  index: number;
  name: string;
  action: string;
  target?: TargetRef;
  with: WithBlock;
  allow_empty: boolean;
  max_failures?: number | string;
  /** Poll each operation until it finished (the playbook's `settings.wait` is the default). */
  wait?: boolean;
  /** How long to wait for one operation, e.g. `30m`. */
  timeout?: string;
  rollout?: Rollout;
  /**
   * Also fail steps whose read-back listing still shows an update available (actions with a `verify`
   * hook); every item write is read back whatever this says.
   */
  verify?: boolean;
  /** Fetch each environment's site before the write and after its operation; a site broken by the write fails the step. */
  health?: HealthSpec;
  /**
   * A manual backup of each environment first; its write waits for it, and a failed backup means no
   * write there. Removed once its write was judged healthy; `{keep: N}` keeps the task's newest N.
   */
  backup_first?: boolean | { keep: number };
}

export interface PlaybookSettings {
  rate_limit?: string;
  concurrency?: number;
  /** `health.visual`: pages the browser shoots at once, across the run (default 2). */
  visual_concurrency?: number;
  /** `health.visual`: false runs Chromium without its sandbox, for root containers (default true; warned of). */
  visual_sandbox?: boolean;
  max_failures?: number | string;
  report_dir?: string;
  /** Track every operation to its end. */
  wait?: boolean;
  /** How long to wait for one operation (default 30m). */
  wait_timeout?: string;
  /** After a stop (budget, window, first Ctrl-C), how long the writes already sent may take to finish their lives (default 30m). */
  finish_within?: string;
  /** Path of the operation status endpoint (default /operations/{operation_id}). */
  operation_path?: string;
  /** One run per company (default), or one per playbook name per company. */
  lock?: 'company' | 'playbook';
  /** The most manual backups the service keeps an environment (default 5, the real service's). */
  manual_backup_slots?: number;
  /** The service's own limit on creating calls (sites, environments, backups, domains, DNS records), when known: N/min. */
  create_rate_limit?: string;
  /** How long an operation id may answer 404 after acceptance before it counts as unknown (default 60s). */
  not_found_grace?: string;
  /** Share of the rate window left free for other clients of the key (0 to 0.9, default 0). */
  headroom?: number;
  /** Absolute paths outside the playbook's folder that it may name (an IP list kept elsewhere). */
  allowed_files?: string[];
  /** The daily maintenance window: writes are sent only inside it. */
  window?: DailyWindow;
  /** What a restore sends beside the backup id (actions/backups-restore.ts). */
  restore?: RestoreSettings;
  /** A healthchecks-style ping URL, as a `${VAR}` reference: `/start` as the run starts, `/<exit code>` as it ends. */
  ping?: string;
  /** Webhooks told of the run's end. */
  notify?: NotifySetting[];
  /** Where the run's Prometheus metrics go (node_exporter's textfile collector). */
  metrics_file?: string;
  /** The waits before an item update that failed for a reason that may pass is sent again on its environment (inventory/withheld.ts). */
  retry_backoff?: string[];
}

/** One webhook of `settings.notify`. */
export interface NotifySetting {
  /** A `${VAR}` reference: a webhook URL is a secret. */
  url: string;
  /** When it is told: exit ≠ 0 (default), always, exit 0, or an exit code other than the previous run's. */
  on?: 'failure' | 'always' | 'success' | 'change';
  format?: 'json' | 'slack';
  /** A `${VAR}` reference to the key of the body's HMAC-SHA256 signature (X-Sitefleet-Signature). */
  secret?: string;
}

export interface Playbook {
  /** The path as the user gave it. */
  file: string;
  name: string;
  company?: string;
  settings: PlaybookSettings;
  targets: Record<string, Selector>;
  /** Site display name → site id, from `sites:` (the listing has no site ids). */
  sites: Record<string, string>;
  tasks: Task[];
  /** Line and column of a field, by dotted path (`tasks.1.with.php_version`). */
  locate(path: string): { line: number; column: number };
}
