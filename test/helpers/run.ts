import { pino } from 'pino';
import { HostingClient } from '../../src/api/client.js';
import { inventoryReader } from '../../src/inventory/read.js';
import { readBackups, readDomains, readInventory, readKind } from '../../src/inventory/read.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { buildPlan } from '../../src/plan/plan.js';
import { kindsNeeded, readsNeeded } from '../../src/plan/needs.js';
import { Caller } from '../../src/run/caller.js';
import { execute, type ExecuteOptions } from '../../src/run/executor.js';
import { RateBudget } from '../../src/run/rate-budget.js';
import type { Simulator } from '../../src/sim/server.js';

export const silent = pino({ level: 'silent' });

/**
 * Plans a playbook against a simulator and runs it in-process, with fast retries. `logs`: the log
 * reads' own rule (the CLI's is 35 a minute), for a test that must see reads wait for it.
 */
export async function runInProcess(
  sim: Simulator,
  yaml: string,
  options: {
    rate?: { limit: number; periodMs: number };
    logs?: { limit: number; periodMs: number };
    concurrency?: number;
    headersTimeoutMs?: number;
  } & Partial<ExecuteOptions> = {},
) {
  const client = new HostingClient({ baseUrl: sim.baseUrl, token: sim.token, headersTimeoutMs: options.headersTimeoutMs });
  const budget = options.rate ? new RateBudget(options.rate.limit, options.rate.periodMs) : undefined;
  const logs = options.logs ? new RateBudget(options.logs.limit, options.logs.periodMs) : undefined;
  const caller = new Caller(client, {
    budget,
    logs,
    logger: silent,
    concurrency: options.concurrency ?? 8,
    retry: { maxAttempts: 5, rateLimitWaitMs: 60_000, baseDelayMs: 5, maxDelayMs: 50 },
  });
  try {
    const playbook = parsePlaybook(`version: 1\nname: t\ncompany: ${sim.companyId}\n${yaml}`, 'pb.yaml', { env: process.env });
    const inventory = await readInventory(inventoryReader(caller), sim.companyId);
    // The other kinds' listings (plugins) and the backups a backup_first task reads, as the CLI reads them (app/prepare.ts).
    for (const kind of kindsNeeded(playbook)) await readKind(inventoryReader(caller), inventory, kind);
    const needs = readsNeeded(playbook, inventory, 'domains');
    if (needs.length) await readDomains(inventoryReader(caller), inventory, needs);
    const backups = readsNeeded(playbook, inventory, 'backups');
    if (backups.length) await readBackups(inventoryReader(caller), inventory, backups);
    const plan = buildPlan({ playbook, inventory, date: '2026-11-22' });
    const outcome = await execute(plan, { caller, logger: silent, concurrency: options.concurrency ?? 8, env: process.env, ...options });
    return { plan, ...outcome, budget };
  } finally {
    budget?.dispose();
    logs?.dispose();
    await client.close();
  }
}
