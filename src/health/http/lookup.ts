import { promises as dns, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { addressRefusal } from './address.js';

/** A site's name to all its addresses. The CLI asks the system's resolver; tests answer from a table. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** A connection the address rule stopped before it was opened: nothing was sent to the site. */
export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
}

/**
 * The `lookup` a site's socket is opened with: the name is resolved once, every address it has is
 * checked (one inside the machine's network refuses the name, unless `allowPrivate`), and the socket
 * connects to those very addresses. No second lookup happens between the check and the connection,
 * so a name that answers a public address first and a private one next cannot slip through.
 */
export function checkedLookup(resolve: Resolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const addresses = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        const why = allowPrivate ? undefined : refusalOf(hostname, addresses);
        if (addresses.length === 0) callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }), '');
        else if (why) callback(new AddressRefusedError(why), '');
        else if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

function refusalOf(hostname: string, addresses: LookupAddress[]): string | undefined {
  for (const { address } of addresses) {
    const kind = addressRefusal(address);
    if (kind) return `${hostname} resolves to ${address}, ${kind} (health.allow_private: true allows it)`;
  }
  return undefined;
}

/** The refusal an error from a fetch carries (undici may wrap the socket's error), if it is one. */
export function refusalIn(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) if (e instanceof AddressRefusedError) return e.message;
  return undefined;
}
