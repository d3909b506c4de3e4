import { describe, expect, it } from 'vitest';
import { healthUrl, parseStatusRanges, resolveHealth } from '../../src/health/spec.js';
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

describe('what the two checks say about a step', () => {
  const ok = { healthy: true, detail: 'HTTP 200' };
  const bad = { healthy: false, detail: 'HTTP 500' };
  it.each([
    [ok, ok, 'healthy', false],
    [ok, bad, 'unhealthy', true],
    [bad, ok, 'healthy', false],
    [bad, bad, 'unhealthy before', false],
    [bad, undefined, 'unhealthy before', false],
    [ok, undefined, 'not checked', false],
    [undefined, bad, 'unhealthy', true],
  ] as const)('before %o, after %o: %s (fails the step: %s)', (before, after, outcome, failsStep) => {
    expect(healthOutcome(before, after)).toEqual({ outcome, failsStep });
  });
});
