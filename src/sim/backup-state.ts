import type { EnvironmentState, Fleet, SimEnvironment } from './fleet.js';

/** A backup keeps its environment as `EnvironmentState` (fleet.ts) says; restoring puts it back. */

export function captureState(env: SimEnvironment): EnvironmentState {
  return {
    themes: [...env.themes].map(([name, theme]) => [name, { ...theme }]),
    phpVersion: env.phpVersion,
    phpAutoUpdateOptOut: env.phpAutoUpdateOptOut,
    deniedIps: [...env.deniedIps],
    sshEnabled: env.sshEnabled,
    sshExpInterval: env.sshExpInterval,
    sftpAccountsEnabled: env.sftpAccountsEnabled,
  };
}

export function putBack(env: SimEnvironment, state: EnvironmentState): void {
  env.themes = new Map(state.themes.map(([name, theme]) => [name, { ...theme }]));
  env.phpVersion = state.phpVersion;
  env.phpAutoUpdateOptOut = state.phpAutoUpdateOptOut;
  env.deniedIps = [...state.deniedIps];
  env.sshEnabled = state.sshEnabled;
  env.sshExpInterval = state.sshExpInterval;
  env.sftpAccountsEnabled = state.sftpAccountsEnabled;
}

/** Every backup the generated fleet starts with keeps the environment as it is then. */
export function captureGenerated(fleet: Fleet): void {
  for (const env of fleet.environments.values()) for (const backup of env.backups) fleet.backupStates.set(backup.id, captureState(env));
}
