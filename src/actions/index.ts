import type { Action } from './action.js';
import { adminUsersCreate, adminUsersLoginLink } from './admin-users.js';
import { backupsCreate } from './backups-create.js';
export { restorePoint } from './backups-create.js';
export { restoreFrom, type RestoreSettings } from './backups-restore.js';
import { deniedIpsSet } from './denied-ips-set.js';
import { dnsRecordsCreate } from './dns-records-create.js';
import { domainsAdd } from './domains-add.js';
import { sftpAccountsSetStatus, sshSetPasswordExpiration, sshSetStatus } from './env-settings.js';
import { environmentsClone, environmentsCreate, environmentsCreatePlain, environmentsPush, sitesCreatePlain } from './environments.js';
import { phpSetVersion } from './php-set-version.js';
import { itemsUpdate } from './items-update.js';
import { KIND_TABLE, KINDS } from '../inventory/kinds.js';
import { wpCliRun } from './wp-cli-run.js';

/** Every playbook action, by the name playbooks use. */
export const ACTIONS: ReadonlyMap<string, Action> = new Map(
  [
    // One update action per kind of installed item, each made from its row of the kind table.
    ...KINDS.map((kind) => itemsUpdate(KIND_TABLE[kind])),
    phpSetVersion,
    deniedIpsSet,
    backupsCreate,
    wpCliRun,
    sshSetStatus,
    sshSetPasswordExpiration,
    sftpAccountsSetStatus,
    domainsAdd,
    dnsRecordsCreate,
    adminUsersCreate,
    adminUsersLoginLink,
    environmentsCreate,
    environmentsCreatePlain,
    environmentsClone,
    environmentsPush,
    sitesCreatePlain,
  ].map((a) => [a.name, a]),
);

/** The actions a task may ask to `verify` (they know how to judge their work in a fresh listing). */
export function verifiable(): string[] {
  return [...ACTIONS.values()].filter((a) => a.verify !== undefined).map((a) => a.name);
}

/** The actions a task may guard with `health:` and `backup_first:`: those that change an environment. */
/** Actions that update installed items (themes, plugins, WordPress): `health.on_broken: isolate` takes their writes apart. */
export function itemActions(): string[] {
  return [...ACTIONS.values()].filter((a) => a.items !== undefined).map((a) => a.name);
}

export function guardable(): string[] {
  return [...ACTIONS.values()].filter((a) => a.scope === 'environment' && a.readOnly !== true).map((a) => a.name);
}
