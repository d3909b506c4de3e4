import { UsageError } from '../errors.js';
import { KINDS, refOf, type Kind } from '../inventory/kinds.js';
import { releaseOf, type Quarantined } from '../inventory/quarantine-table.js';
import type { RetryFailure } from '../inventory/retry-table.js';
import { versionKey } from '../util/item-version.js';
import { itemOf } from '../inventory/kinds.js';
import type { GlobalOptions } from './runtime.js';
import { RunScope } from './run-scope.js';
import type { UnreadLine } from '../inventory/unread-line.js';
import { forTerminal } from '../util/safe-text.js';
import { unreadWarning } from './withheld-record.js';

/**
 * What `sitefleet quarantine` and `sitefleet retry` do with the company's stores (the state folder, or
 * Redis with --coordination, as the runs that write them): list what is held, and let one item version
 * go. No lock is taken: the stores take concurrent writers (coord/table-file.ts).
 */

/** `NAME@VERSION`, and the kind given with --kind, if any. */
export interface ItemVersionArg {
  name: string;
  version: string;
  kind?: Kind;
}

export function parseItemVersion(text: string, kind: string | undefined): ItemVersionArg {
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1) throw new UsageError(`${JSON.stringify(text)}: give the item and the version as NAME@VERSION (forms@2.0.0)`);
  if (kind !== undefined && !(KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind ${kind}: one of ${KINDS.join(', ')}`);
  return { name: text.slice(0, at), version: text.slice(at + 1), ...(kind ? { kind: kind as Kind } : {}) };
}

function companyOf(globals: GlobalOptions): string {
  if (!globals.company) throw new UsageError('no company: set SITEFLEET_COMPANY or pass --company');
  return globals.company;
}

/** A warning for each line of the store that cannot be read: what it holds is not in the list, and a person must see it. */
function warnUnread(globals: GlobalOptions, store: 'quarantine' | 'retry', lines: readonly UnreadLine[]): void {
  for (const line of lines) globals.io.stderr.write(`sitefleet: warning: ${forTerminal(unreadWarning(store, line))}\n`);
}

export function listQuarantine(globals: GlobalOptions): Promise<Quarantined[]> {
  const company = companyOf(globals);
  return RunScope.with(globals, undefined, async (scope) => {
    const table = await scope.coordination.quarantine(company).record([]);
    warnUnread(globals, 'quarantine', table.unread);
    return table.list();
  });
}

/** The one kind `arg` names among those it matches; exit 2 when it matches none, or several and --kind did not choose. */
function oneKind(arg: ItemVersionArg, kinds: readonly Kind[], what: string, list: string): Kind {
  const matching = KINDS.filter((k) => kinds.includes(k) && (arg.kind === undefined || k === arg.kind));
  const named = `${arg.kind ? `${arg.kind} ` : ''}${arg.name}@${arg.version}`;
  if (matching.length === 0) throw new UsageError(`${named} is not ${what}: \`${list}\` shows what is`);
  if (matching.length > 1) throw new UsageError(`${named} is ${what} as a ${matching.join(' and as a ')}: say which with --kind ${matching.join('|')}`);
  return matching[0]!;
}

/** Releases one quarantined version: every break of it recorded until now is folded away, on every environment. */
export function releaseQuarantine(globals: GlobalOptions, arg: ItemVersionArg): Promise<Quarantined> {
  const company = companyOf(globals);
  return RunScope.with(globals, undefined, async (scope) => {
    const store = scope.coordination.quarantine(company);
    const table = await store.record([]);
    const kind = oneKind(arg, table.kindsOf(arg.name, arg.version), 'quarantined', 'sitefleet quarantine list');
    const held = table.get(kind, arg.name, arg.version)!;
    await store.record([releaseOf(kind, arg.name, held.version, globals.io.now())]);
    return held;
  });
}

export function listRetries(globals: GlobalOptions): Promise<RetryFailure[]> {
  const company = companyOf(globals);
  return RunScope.with(globals, undefined, async (scope) => {
    const table = await scope.coordination.retries(company).record([]);
    warnUnread(globals, 'retry', table.unread);
    return table.standing();
  });
}

/** Clears one item version's failures on every environment: the next run sends it wherever it is offered. */
export function clearRetry(globals: GlobalOptions, arg: ItemVersionArg): Promise<RetryFailure[]> {
  const company = companyOf(globals);
  return RunScope.with(globals, undefined, async (scope) => {
    const store = scope.coordination.retries(company);
    const failing = (await store.record([])).standing().filter((f) => itemOf(f)!.name === arg.name && versionKey(f.version) === versionKey(arg.version));
    const kind = oneKind(
      arg,
      failing.map((f) => itemOf(f)!.kind),
      'waiting to be tried again',
      'sitefleet retry list',
    );
    await store.record([{ ...refOf(kind, arg.name), cleared: true, at: globals.io.now(), version: arg.version }]);
    return failing.filter((f) => itemOf(f)!.kind === kind);
  });
}
