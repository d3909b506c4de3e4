import { BlockList, isIP } from 'node:net';

/**
 * Where a health check may go. Domains the service lists are written by anyone on the account, so
 * they are hosts on the internet, never inside the machine's network: not an IP address in any
 * notation, not this machine by name, and not resolving to an address only this machine or its
 * network reaches (loopback, private, link-local where cloud metadata services answer, …).
 */

/** The address ranges a domain from the service may not reach, each with the words a refusal uses. */
const RANGES: [kind: string, family: 'ipv4' | 'ipv6', cidr: string][] = [
  ['an unspecified address', 'ipv4', '0.0.0.0/8'],
  ['a private address', 'ipv4', '10.0.0.0/8'],
  ['a shared (carrier-grade NAT) address', 'ipv4', '100.64.0.0/10'],
  ['a loopback address', 'ipv4', '127.0.0.0/8'],
  ['a link-local address (where cloud metadata services answer)', 'ipv4', '169.254.0.0/16'],
  ['a private address', 'ipv4', '172.16.0.0/12'],
  ['a reserved address', 'ipv4', '192.0.0.0/24'],
  ['a private address', 'ipv4', '192.168.0.0/16'],
  ['a reserved address', 'ipv4', '198.18.0.0/15'],
  ['a multicast address', 'ipv4', '224.0.0.0/4'],
  ['a reserved address', 'ipv4', '240.0.0.0/4'],
  ['an unspecified address', 'ipv6', '::/128'],
  ['a loopback address', 'ipv6', '::1/128'],
  // IPv4-compatible (deprecated): nothing on the internet answers there.
  ['a reserved address', 'ipv6', '::/96'],
  ['a private address', 'ipv6', '64:ff9b:1::/48'],
  ['a unique-local address', 'ipv6', 'fc00::/7'],
  ['a link-local address', 'ipv6', 'fe80::/10'],
  ['a private address', 'ipv6', 'fec0::/10'],
  ['a multicast address', 'ipv6', 'ff00::/8'],
];

const BLOCKS = RANGES.map(([kind, family, cidr]) => {
  const list = new BlockList();
  const [network, prefix] = cidr.split('/');
  list.addSubnet(network!, Number(prefix), family);
  return { kind, family, list };
});

/**
 * Why a health check may not connect to `ip` (`a loopback address`), or undefined for an address on
 * the internet. Anything that does not read as an address is refused too.
 */
export function addressRefusal(ip: string): string | undefined {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return 'not an IP address';
  const carried = family === 6 ? embeddedV4(bare) : undefined;
  if (carried) return addressRefusal(carried);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return BLOCKS.find((b) => b.family === type && b.list.check(bare, type))?.kind;
}

/** The IPv4 address an IPv4-mapped (`::ffff:0:0/96`) or NAT64 (`64:ff9b::/96`) address carries: it is judged by that. */
function embeddedV4(ipv6: string): string | undefined {
  const [head = '', tail] = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1).split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const g = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right].map((x) => parseInt(x, 16));
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  if (!mapped && !nat64) return undefined;
  return [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.');
}

/**
 * Why a host name from the service is not one a check may fetch: an IP address in any notation a URL
 * parser or the resolver reads (`2130706433`, `0x7f.1`, `127.1`, `0177.0.0.1`, `[::1]`), or this
 * machine by name (`localhost`, `*.localhost`). Undefined for a DNS name.
 */
export function nameRefusal(host: string): string | undefined {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return 'names this machine (localhost)';
  if (name.includes(':') || name.startsWith('[')) return 'is an IPv6 address';
  // A URL parser reads a host whose last label is a number (decimal, octal or hex) as an IPv4 address.
  if (/^(?:0x[0-9a-f]*|[0-9]+)$/i.test(name.split('.').at(-1)!)) {
    const read = URL.canParse(`http://${name}/`) ? new URL(`http://${name}/`).hostname : undefined;
    return read && read !== name && isIP(read) ? `is an IP address (${read})` : 'is an IP address';
  }
  return undefined;
}
