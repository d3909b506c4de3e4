import { describe, expect, it } from 'vitest';
import { addressRefusal, nameRefusal } from '../../../src/health/http/address.js';

describe('where a domain from the service may send a health check', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.255.0.9', 'a loopback address'],
    ['10.1.2.3', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['169.254.169.254', 'a link-local address (where cloud metadata services answer)'],
    ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
    ['100.100.100.200', 'a shared (carrier-grade NAT) address'],
    ['0.0.0.0', 'an unspecified address'],
    ['224.0.0.1', 'a multicast address'],
    ['255.255.255.255', 'a reserved address'],
    ['::1', 'a loopback address'],
    ['[::1]', 'a loopback address'],
    ['::', 'an unspecified address'],
    ['fe80::1', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['fc00::1', 'a unique-local address'],
    ['fd00:ec2::254', 'a unique-local address'],
    ['ff02::1', 'a multicast address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:a9fe:a9fe', 'a link-local address (where cloud metadata services answer)'],
    ['64:ff9b::10.0.0.1', 'a private address'],
    ['64:ff9b::', 'an unspecified address'],
    ['not-an-address', 'not an IP address'],
  ])('%s is refused: %s', (ip, kind) => {
    expect(addressRefusal(ip)).toBe(kind);
  });

  it.each(['8.8.8.8', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])('%s is on the internet', (ip) => {
    expect(addressRefusal(ip)).toBeUndefined();
  });

  it.each([
    ['2130706433', 'is an IP address (127.0.0.1)'],
    ['0x7f.1', 'is an IP address (127.0.0.1)'],
    ['127.1', 'is an IP address (127.0.0.1)'],
    ['0177.0.0.1', 'is an IP address (127.0.0.1)'],
    ['169.254.169.254', 'is an IP address'],
    ['1.2.3.4.5', 'is an IP address'],
    ['example.123', 'is an IP address'],
    ['::1', 'is an IPv6 address'],
    ['[::ffff:127.0.0.1]', 'is an IPv6 address'],
    ['localhost', 'names this machine (localhost)'],
    ['LocalHost', 'names this machine (localhost)'],
    ['localhost.', 'names this machine (localhost)'],
    ['shop.localhost', 'names this machine (localhost)'],
  ])('the name %s is refused: %s', (name, why) => {
    expect(nameRefusal(name)).toBe(why);
  });

  it.each(['example.com', 'acme-001.example.com', '1password.com', 'a1.b2.example', 'localhost.example.com', 'x.0xfe.example'])(
    'the name %s is a DNS name',
    (name) => {
      expect(nameRefusal(name)).toBeUndefined();
    },
  );
});
