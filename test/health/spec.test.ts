import { describe, expect, it } from 'vitest';
import { clearsCache, healthUrl, hostFromService, literalAddress, parseStatusRanges, resolveHealth } from '../../src/health/spec.js';
import { healthOutcome } from '../../src/run/health-gate.js';

describe('health: as a playbook gives it', () => {
  it('true is every default', () => {
    expect(resolveHealth(true).spec).toMatchObject({
      url: 'https://{{domain}}/',
      status: [[200, 399]],
      timeout_ms: 15_000,
      attempts: 3,
      interval_ms: 5_000,
      concurrency: 8,
      on_missing_domain: 'skip',
    });
    expect(resolveHealth(true).spec!.not_contains).toContain('There has been a critical error on this website');
  });

  it('status ranges and lists', () => {
    expect(parseStatusRanges('200-299, 301,302')).toEqual([
      [200, 299],
      [301, 301],
      [302, 302],
    ]);
    expect(resolveHealth({ status: '399-200' }).problems).toEqual([{ path: 'status', message: 'a range must go up, e.g. 200-399' }]);
  });

  it('an unknown template or a URL that is not http(s) is a problem at health.url', () => {
    expect(resolveHealth({ url: 'https://{{domian}}/' }).problems[0]).toMatchObject({
      path: 'url',
      message: expect.stringContaining('unknown template {{domian}}'),
    });
    expect(resolveHealth({ url: 'ftp://{{domain}}/' }).problems[0]).toMatchObject({ path: 'url' });
  });

  it('names from the service are percent-encoded; a domain that is not a host name gives no URL', () => {
    const spec = resolveHealth({ url: 'https://{{domain}}/?site={{site}}&env={{env}}' }).spec!;
    expect(healthUrl(spec, { domain: 'acme.example.com', site: 'a&b/../x', env: 'live#1', env_id: 'e' })).toEqual({
      url: 'https://acme.example.com/?site=a%26b%2F..%2Fx&env=live%231',
    });
    expect(healthUrl(spec, { domain: 'evil.example/@other', site: 's', env: 'e', env_id: 'e' })).toEqual({
      problem: 'domain "evil.example/@other" is not a host name',
    });
  });
});

describe('health: a domain from the service is a host on the internet', () => {
  const values = { site: 's', env: 'live', env_id: 'e' };
  it.each([
    ['2130706433', 'is an IP address (127.0.0.1)'],
    ['0x7f.1', 'is an IP address (127.0.0.1)'],
    ['127.1', 'is an IP address (127.0.0.1)'],
    ['0177.0.0.1', 'is an IP address (127.0.0.1)'],
    ['169.254.169.254', 'is an IP address'],
    ['localhost', 'names this machine (localhost)'],
    ['admin.LOCALHOST', 'names this machine (localhost)'],
  ])('the domain %s gives no URL: it %s', (domain, why) => {
    for (const url of ['https://{{domain}}/', 'http://127.0.0.1:8080/sites/{{domain}}/']) {
      expect(healthUrl(resolveHealth({ url }).spec!, { domain, ...values })).toEqual({
        problem: `domain ${JSON.stringify(domain)} ${why}, not a host on the internet`,
      });
    }
  });

  it.each(['[::1]', '::1', '[fe80::1]'])('the IPv6 literal %s is not a host name', (domain) => {
    expect(healthUrl(resolveHealth(true).spec!, { domain, ...values })).toEqual({ problem: `domain ${JSON.stringify(domain)} is not a host name` });
  });

  it('a host built from another name of the service is held to the same rule', () => {
    const spec = resolveHealth({ url: 'http://{{site}}/' }).spec!;
    expect(healthUrl(spec, { ...values, site: '127.0.0.1' })).toEqual({
      problem: 'host "127.0.0.1" (from the service\'s names) is an IP address, not a host on the internet',
    });
    expect(healthUrl(spec, { ...values, site: '2130706433' })).toEqual({
      problem: 'host "127.0.0.1" (from the service\'s names) is an IP address, not a host on the internet',
    });
    expect(healthUrl(spec, { ...values, site: 'localhost' })).toMatchObject({ problem: expect.stringContaining('names this machine (localhost)') });
    expect(healthUrl(resolveHealth({ url: 'https://{{site}}.example.net/' }).spec!, { ...values, site: 'localhost' })).toEqual({
      url: 'https://localhost.example.net/',
    });
  });

  it('whose host the playbook wrote, and which address it names', () => {
    expect(hostFromService('https://{{domain}}/')).toBe(true);
    expect(hostFromService('https://www.{{site}}.example/')).toBe(true);
    expect(hostFromService('http://127.0.0.1:8080/sites/{{domain}}/')).toBe(false);
    expect(literalAddress('http://127.0.0.1:8080/sites/{{domain}}/')).toBe('127.0.0.1');
    expect(literalAddress('http://[::1]:8080/{{domain}}')).toBe('[::1]');
    expect(literalAddress('http://2130706433/{{domain}}')).toBe('127.0.0.1');
    expect(literalAddress('http://localhost:8080/{{domain}}')).toBeUndefined();
    expect(literalAddress('https://{{domain}}/')).toBeUndefined();
  });

  it('allow_private is carried only when the playbook sets it', () => {
    expect(resolveHealth({ allow_private: true }).spec).toMatchObject({ allow_private: true });
    expect(resolveHealth({ allow_private: false }).spec).not.toHaveProperty('allow_private');
    expect(resolveHealth(true).spec).not.toHaveProperty('allow_private');
  });

  it('clears the page cache unless the playbook says clear_cache: false (a plan without the field clears)', () => {
    expect(resolveHealth(true).spec).not.toHaveProperty('clear_cache');
    expect(resolveHealth({ clear_cache: true }).spec).not.toHaveProperty('clear_cache');
    expect(resolveHealth({ clear_cache: false }).spec).toMatchObject({ clear_cache: false });
    expect(clearsCache(resolveHealth(true).spec!)).toBe(true);
    expect(clearsCache(resolveHealth({ clear_cache: false }).spec!)).toBe(false);
  });
});

describe('what the two checks say about a step', () => {
  const ok = { healthy: true, detail: 'HTTP 200' };
  const bad = { healthy: false, detail: 'HTTP 500' };
  const cleared = { outcome: 'cleared' } as const;
  const notCleared = { outcome: 'not cleared', detail: 'its operation failed' } as const;
  const notAvailable = { outcome: 'not available', detail: 'the service has no such clear here: POST /v2/sites/tools/clear-cache answered 404' } as const;
  it.each([
    [ok, ok, undefined, 'healthy', false, false],
    [ok, bad, undefined, 'unhealthy', true, false],
    [bad, ok, undefined, 'healthy', false, false],
    [bad, bad, undefined, 'unhealthy before', false, false],
    [bad, undefined, undefined, 'unhealthy before', false, false],
    [ok, undefined, undefined, 'not checked', false, false],
    [undefined, bad, undefined, 'unhealthy', true, false],
    [ok, ok, cleared, 'healthy', false, false],
    [ok, bad, cleared, 'unhealthy', true, false],
    // The cache kept the page from before the write: a healthy answer saw nothing new, and holds the step.
    [ok, ok, notCleared, 'not checked', false, true],
    [bad, ok, notCleared, 'not checked', false, true],
    // A broken page is broken whichever served it.
    [ok, bad, notCleared, 'unhealthy', true, false],
    [bad, bad, notCleared, 'unhealthy before', false, false],
    [ok, undefined, notCleared, 'not checked', false, false],
    // A clear the service refused as missing (404, 405): the look goes on, as with clear_cache: false.
    [ok, ok, notAvailable, 'healthy', false, false],
    [ok, bad, notAvailable, 'unhealthy', true, false],
    [bad, ok, notAvailable, 'healthy', false, false],
    [bad, bad, notAvailable, 'unhealthy before', false, false],
  ] as const)('before %o, after %o, cache %o: %s (fails the step: %s, holds it: %s)', (before, after, cache, outcome, failsStep, holdsStep) => {
    expect(healthOutcome(before, after, cache)).toEqual({ outcome, failsStep, holdsStep });
  });
});
