import { describe, expect, it } from 'vitest';
import { DEFAULT_LEASE_MS, parseRedisUrl } from '../../src/coord/redis/link.js';
import { lockFileName } from '../../src/coord/file-lock.js';

describe('--coordination URL', () => {
  it('takes host, port, database, credentials and a lease; describes itself without the password', () => {
    const a = parseRedisUrl('redis://ops:s3cret@redis.internal:6380/2?lease=30s');
    expect(a.options).toMatchObject({ host: 'redis.internal', port: 6380, db: 2, username: 'ops', password: 's3cret' });
    expect(a.describe).toBe('redis://redis.internal:6380/2');
    expect(a.describe).not.toContain('s3cret');
    expect(a.leaseMs).toBe(30_000);
    const b = parseRedisUrl('rediss://cache');
    expect(b.options).toMatchObject({ host: 'cache', port: 6379, db: 0, tls: {} });
    expect(b.leaseMs).toBe(DEFAULT_LEASE_MS);
  });

  it.each([
    ['redis.internal:6379', /--coordination redis.internal:6379: only redis:\/\/ and rediss:\/\/ URLs are understood/],
    ['not a url', /is not a URL/],
    ['http://redis/0', /only redis:\/\/ and rediss:\/\//],
    ['redis://redis/zero', /the database in \/zero must be a number/],
    ['redis://redis/0?lease=soon', /lease=soon is not a duration/],
    ['redis://redis/0?lease=200ms', /shorter than a second/],
    ['redis://redis/0?lease=1000h', /lease="1000h" is longer than 10m, the most it takes/],
  ])('%s is a usage error', (url, message) => {
    expect(() => parseRedisUrl(url)).toThrow(message);
  });
});

describe('lock file names', () => {
  it('one per company, or per playbook name made safe for a file name and kept apart by a hash', () => {
    const company = '0f1e2d3c-4b5a-4697-8899-aabbccddeeff';
    expect(lockFileName({ company, kind: 'company' })).toBe(`${company}.lock`);
    const a = lockFileName({ company, kind: 'playbook', playbook: 'nightly/../backups' });
    const b = lockFileName({ company, kind: 'playbook', playbook: 'nightly_.._backups' });
    expect(a).not.toContain('/');
    expect(a).not.toBe(b);
  });
});
