import type { EnvironmentState, Fleet, InstalledItem, SimEnvironment } from './fleet.js';

/** A backup keeps its environment as `EnvironmentState` (fleet.ts) says; restoring puts it back. */

function copyItems(items: Iterable<[string, InstalledItem]>): [string, InstalledItem][] {
  return [...items].map(([name, item]) => [name, { ...item }]);
}

export function captureState(env: SimEnvironment): EnvironmentState {
  return {
    themes: copyItems(env.themes),
    plugins: copyItems(env.plugins),
    wordpressVersion: env.wordpressVersion,
    ...(env.wordpressDb !== undefined ? { wordpressDb: env.wordpressDb } : {}),
    phpVersion: env.phpVersion,
    phpAutoUpdateOptOut: env.phpAutoUpdateOptOut,
    deniedIps: [...env.deniedIps],
    sshEnabled: env.sshEnabled,
    sshExpInterval: env.sshExpInterval,
    sftpAccountsEnabled: env.sftpAccountsEnabled,
    ...(env.orders === undefined ? {} : { orders: env.orders }),
  };
}

export function putBack(env: SimEnvironment, state: EnvironmentState): void {
  env.themes = new Map(copyItems(state.themes));
  env.plugins = new Map(copyItems(state.plugins));
  env.wordpressVersion = state.wordpressVersion;
  // The backup's database comes back with its files: as they were, upgraded or not.
  if (state.wordpressDb === undefined) delete env.wordpressDb;
  else env.wordpressDb = state.wordpressDb;
  env.phpVersion = state.phpVersion;
  env.phpAutoUpdateOptOut = state.phpAutoUpdateOptOut;
  env.deniedIps = [...state.deniedIps];
  env.sshEnabled = state.sshEnabled;
  env.sshExpInterval = state.sshExpInterval;
  env.sftpAccountsEnabled = state.sftpAccountsEnabled;
  // The database goes back too: orders made since the backup are lost.
  if (state.orders !== undefined || env.orders !== undefined) env.orders = state.orders ?? 0;
}

/**
 * Every backup the generated fleet starts with keeps the environment as it is then: one state shared
 * by its backups (putBack copies from it, nothing writes to it), so 50,000 installed plugins are kept
 * once, not once a backup.
 */
export function captureGenerated(fleet: Fleet): void {
  for (const env of fleet.environments.values()) {
    const state = captureState(env);
    for (const backup of env.backups) fleet.backupStates.set(backup.id, state);
  }
}
