import { defaultStateDir } from './file-lock.js';
import { localCoordination } from './local.js';
import type { Coordination } from './types.js';

/** This machine's state folder (`--state-dir`, SITEFLEET_STATE_DIR, else ~/.cache/sitefleet): run locks, and what a run leaves for the next. */
export function stateDirOf(options: { stateDir?: string; io: { env: Record<string, string | undefined> } }): string {
  return options.stateDir ?? defaultStateDir(options.io.env);
}

/**
 * The coordination a command runs under: Redis when `--coordination` (SITEFLEET_COORDINATION) names
 * one, else this machine alone. The Redis client is loaded only in the first case.
 */
export async function openCoordination(options: {
  coordination?: string;
  stateDir?: string;
  io: { env: Record<string, string | undefined> };
}): Promise<Coordination> {
  if (!options.coordination) return localCoordination(stateDirOf(options));
  const { redisCoordination } = await import('./redis/index.js');
  return redisCoordination(options.coordination);
}
