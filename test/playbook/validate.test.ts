import { describe, expect, it } from 'vitest';
import { formatProblem, InvalidInputError } from '../../src/errors.js';
import { assertBodiesValid } from '../../src/app/load-playbook.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { PLAYBOOKS, runCli, writePlaybook } from '../helpers/cli.js';
import { readdirSync } from 'node:fs';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';

function problems(text: string, env: Record<string, string> = {}) {
  try {
    assertBodiesValid(parsePlaybook(text, 'pb.yaml', { env, requireEnv: true }));
  } catch (error) {
    if (error instanceof InvalidInputError) return error.problems.map((p) => formatProblem(p).replace(/^pb\.yaml:/, ''));
    throw error;
  }
  return [];
}

const head = `version: 1\nname: t\ncompany: ${COMPANY}\n`;

describe('playbook validation names file, line, column and field', () => {
  it('accepts the issue example shape', () => {
    const pb = parsePlaybook(
      `${head}settings:\n  rate_limit: 120/min\n  concurrency: 8\n  max_failures: 5%\ntargets:\n  production: { environment: live, site: ["acme-*", "blue-*"], exclude: { site: "legacy-*" } }\ntasks:\n  - name: Theme updates\n    action: themes.update\n    target: production\n    with: { skip_vulnerable_updates: true }\n  - name: PHP\n    action: php.set_version\n    target: { environment: staging }\n    with: { php_version: "8.3" }\n  - name: Deny\n    action: denied_ips.set\n    target: all\n    with: { ip_list: ["203.0.113.7", "198.51.100.0/32", "2001:db8::1"] }\n  - name: Backup\n    action: backups.create\n    target: all\n    with: { tag: "nightly-{{date}}" }\n`,
      'pb.yaml',
      { env: {} },
    );
    expect(pb.tasks.map((t) => t.action)).toEqual(['themes.update', 'php.set_version', 'denied_ips.set', 'backups.create']);
    expect(pb.company).toBe(COMPANY);
  });

  it.each([
    ['a YAML syntax error', `${head}tasks:\n  - name: x\n    action: [unclosed\n`, /^\d+:\d+: \(root\): YAML: /],
    [
      'an unknown action',
      `${head}tasks:\n  - name: x\n    action: themes.upgrade\n    target: all\n`,
      /^6:13: tasks\.0\.action: must be one of "themes.update"/,
    ],
    [
      'an invalid IP',
      `${head}tasks:\n  - name: x\n    action: denied_ips.set\n    target: all\n    with:\n      ip_list: ["203.0.113.7", "300.1.1.1"]\n`,
      /^9:32: tasks\.0\.with\.ip_list\.1: "300.1.1.1" is not a valid IP entry/,
    ],
    [
      'a wp_command outside the pattern',
      `${head}tasks:\n  - name: x\n    action: wp_cli.run\n    target: all\n    with: { wp_command: "wp plugin list | grep x" }\n`,
      /^8:\d+: tasks\.0\.with\.wp_command: "wp plugin list \| grep x" does not match A WP-CLI command/,
    ],
    [
      'a PHP version that is not major.minor',
      `${head}tasks:\n  - name: x\n    action: php.set_version\n    target: all\n    with: { php_version: 8 }\n`,
      /tasks\.0\.with\.php_version: must be string/,
    ],
    [
      'an unknown field in with',
      `${head}tasks:\n  - name: x\n    action: backups.create\n    target: all\n    with: { tag: a, tagg: b }\n`,
      /^8:\d+: tasks\.0\.with\.tagg: is not a known field/,
    ],
    ['a missing with field', `${head}tasks:\n  - name: x\n    action: backups.create\n    target: all\n    with: {}\n`, /tasks\.0\.with\.tag: is required/],
    [
      'an unknown named target',
      `${head}tasks:\n  - name: x\n    action: backups.create\n    target: prod\n    with: { tag: a }\n`,
      /^7:13: tasks\.0\.target: no target named "prod" \(none defined under targets/,
    ],
    ['a missing target', `${head}tasks:\n  - name: x\n    action: backups.create\n    with: { tag: a }\n`, /tasks\.0\.action: backups\.create needs a target/],
    [
      'a selector with a typo',
      `${head}tasks:\n  - name: x\n    action: backups.create\n    target: { sites: "acme-*" }\n    with: { tag: a }\n`,
      /tasks\.0\.target\.sites: is not a known field/,
    ],
    [
      'a non-UUID company',
      `version: 1\nname: t\ncompany: acme\ntasks:\n  - name: x\n    action: backups.create\n    target: all\n    with: { tag: a }\n`,
      /^3:10: company: /,
    ],
    [
      'an unset environment variable',
      `version: 1\nname: t\ncompany: \${NOPE_COMPANY}\ntasks:\n  - name: x\n    action: backups.create\n    target: all\n    with: { tag: a }\n`,
      /^3:10: company: environment variable NOPE_COMPANY is not set/,
    ],
    [
      'a secret written in plain text',
      `${head}tasks:\n  - name: x\n    action: environments.create\n    with: { site_id: "${COMPANY}", display_name: dev, admin_password: hunter22 }\n`,
      /tasks\.0\.with\.admin_password: is not the admin password: a \$\{ENV_VAR\} reference, never the secret itself \(the value is not shown: it is a secret\)$/m,
    ],
    [
      'two tasks with one name',
      `${head}tasks:\n  - name: x\n    action: backups.create\n    target: all\n    with: { tag: a }\n  - name: x\n    action: backups.create\n    target: all\n    with: { tag: b }\n`,
      /^9:11: tasks\.1\.name: another task/,
    ],
    [
      'a misspelt template',
      `${head}tasks:\n  - name: x\n    action: backups.create\n    target: all\n    with: { tag: "nightly-{{envv}}" }\n`,
      /^8:\d+: tasks\.0\.with\.tag: unknown template \{\{envv\}\}; known: \{\{date\}\}/,
    ],
    [
      'a bad rate',
      `${head}settings: { rate_limit: fast }\ntasks:\n  - name: x\n    action: backups.create\n    target: all\n    with: { tag: a }\n`,
      /^4:25: settings\.rate_limit: /,
    ],
    [
      'a bad failure budget',
      `${head}settings: { max_failures: "5 percent" }\ntasks:\n  - name: x\n    action: backups.create\n    target: all\n    with: { tag: a }\n`,
      /settings\.max_failures: /,
    ],
    [
      'a target on a site-scoped action',
      `${head}tasks:\n  - name: x\n    action: sites.create_plain\n    target: all\n    with: { display_name: a, region: us-central1 }\n`,
      /tasks\.0\.target: sites\.create_plain acts once/,
    ],
    [
      'push with SPECIFIC_FILES and no file list',
      `${head}tasks:\n  - name: x\n    action: environments.push\n    with: { site_id: "${COMPANY}", source_env_id: "${COMPANY}", target_env_id: "${COMPANY}", push_files_option: SPECIFIC_FILES }\n`,
      /tasks\.0\.with\.file_list: is required/,
    ],
    [
      'rollout.security_bypass without staging first',
      `${head}tasks:\n  - name: x\n    action: plugins.update\n    target: all\n    rollout: { security_bypass: true }\n`,
      /tasks\.0\.rollout\.security_bypass: goes with rollout\.staging_first: true/,
    ],
    [
      'rollout.security_bypass that is not true or false',
      `${head}tasks:\n  - name: x\n    action: plugins.update\n    target: all\n    rollout: { staging_first: true, security_bypass: always }\n`,
      /tasks\.0\.rollout\.security_bypass: /,
    ],
  ])('%s', (_, text, expected) => {
    const found = problems(text);
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).toMatch(expected);
  });

  it('points at the line of a bad entry in an ip_list_file', async () => {
    const dir = (await import('../helpers/cli.js')).tempDir();
    writePlaybook('# comment\n203.0.113.7\n\n10.0.0.1/40\n', dir, 'ips.txt');
    const file = writePlaybook(`${head}tasks:\n  - name: x\n    action: denied_ips.set\n    target: all\n    with: { ip_list_file: ips.txt }\n`, dir);
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${dir}/ips.txt:4:1: tasks.0.with.ip_list_file: line 4 is not an IPv4 address, IPv4 with a prefix such as /32, or IPv6 address`,
    );
  });

  it('`sitefleet validate` exits 0 for every shipped example and 2 with file:line:col lines otherwise', async () => {
    const examples = readdirSync(PLAYBOOKS)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => `${PLAYBOOKS}${f}`);
    expect(examples.length).toBeGreaterThanOrEqual(5);
    const ok = await runCli(['validate', ...examples], { SITEFLEET_COMPANY: '0b7a4c1e-1111-4222-8333-444455556666' });
    expect([ok.code, ok.stderr]).toEqual([0, '']);
    // Without the variable the examples refer to, each is still valid, with a warning that names it.
    const lenient = await runCli(['validate', examples[0]!]);
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toMatch(/company: warning: environment variable SITEFLEET_COMPANY is not set/);
    const bad = writePlaybook(`${head}tasks:\n  - name: x\n    action: wp_cli.run\n    target: all\n    with: { wp_command: "rm -rf /" }\n`);
    const result = await runCli(['validate', bad]);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(new RegExp(`^${bad}:8:\\d+: tasks\\.0\\.with\\.wp_command: "rm -rf /" does not match`));
    expect(result.stderr).toContain('nothing was sent');
  });
});
