import { describe, expect, it } from 'vitest';
import { DEFAULT_LEASE_MS, parseRedisUrl } from '../../src/coord/redis/link.js';
import { lockFileName } from '../../src/coord/file-lock.js';
import { redactUrl } from '../../src/util/redact-url.js';
import { runCli, tempDir } from '../helpers/cli.js';

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

/**
 * URLs with a password (`s3cr3t-pw`, alone or after `:`), as people mistype them and as they are right.
 * Those that parse and pass every check name 127.0.0.1:9, where nothing answers: no other host is tried.
 */
const WITH_PASSWORD = [
  'rediss//:s3cr3t-pw@redis.internal:6380/0',
  'redis:/ops:s3cr3t-pw@redis.internal/0',
  'redis//ops:s3cr3t-pw@redis.internal/0',
  ':s3cr3t-pw@redis.internal:6379',
  's3cr3t-pw@redis.internal',
  'redis://ops:s3cr3t-pw@redis internal/0',
  'redis://:s3cr3t-pw@host:port/0',
  'redis://:p@ss:s3cr3t-pw@127.0.0.1:9/0',
  'http://ops:s3cr3t-pw@127.0.0.1:9/0',
  'redis://ops:s3cr3t-pw@127.0.0.1:9/zero',
  'redis://ops:12/s3cr3t-pw@127.0.0.1:9/0',
  'redis://ops:s3cr3t-pw@127.0.0.1:9/0?lease=soon',
  'redis://ops:s3cr3t-pw@127.0.0.1:9/0?lease=1000h',
  'redis://ops:s3cr3t-pw@127.0.0.1:9/0',
];

describe('a coordination URL is never shown with its password', () => {
  it('redactUrl hides whatever stands before the last @ of the address, parsed or not', () => {
    expect(redactUrl('rediss//:pw@host:6380/0')).toBe('rediss//***@host:6380/0');
    expect(redactUrl('redis://ops:pw@host/0')).toBe('redis://***@host/0');
    expect(redactUrl(':p@ss@host')).toBe('***@host');
    expect(redactUrl('redis://host/0')).toBe('redis://host/0');
    for (const url of WITH_PASSWORD) expect(redactUrl(url)).not.toContain('s3cr3t');
  });

  it.each(WITH_PASSWORD)('%s: the error names the flag, and the password is not in what the CLI prints', async (url) => {
    const env = { SITEFLEET_STATE_DIR: tempDir(), SITEFLEET_COMPANY: '0f1e2d3c-4b5a-4697-8877-665544332211', SITEFLEET_COORDINATION: url };
    const result = await runCli(['inventory', '--log-level', 'trace'], env);
    expect(result.code === 2 || result.code === 3).toBe(true);
    expect(result.stderr).toMatch(/--coordination/);
    expect(result.stdout + result.stderr).not.toContain('s3cr3t');
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
