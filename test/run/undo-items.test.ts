import { describe, expect, it } from 'vitest';
import { ITEM_WRITES } from '../../src/actions/item-writes.js';
import type { Step } from '../../src/plan/plan.js';
import { commandsOf } from '../../src/run/life/undo-items.js';

/** The API's wp_command pattern (hosting-api-spec.md, Limits). */
const WP_COMMAND = /^wp\s+[a-zA-Z0-9_\-./:=@'\s]+$/;

const bulk = (precondition: string, names: string[]) =>
  ({
    id: 's',
    action: 'plugins.update',
    target: { env_id: 'e1' },
    params: { env_id: 'e1' },
    body: { plugins: names.map((name) => ({ name })) },
    precondition,
  }) as unknown as Step;

describe('the commands that put an item back by its own files', () => {
  it('each kind its own: plugin and theme install --force, core update --force; all within the API pattern', () => {
    const made = [
      ITEM_WRITES.plugin.putBack('e1', { name: 'jetpack', version: '3.0.0' }),
      ITEM_WRITES.theme.putBack('e1', { name: 'twentytwentyfour', version: '1.2' }),
      ITEM_WRITES.core.putBack('e1', { name: 'wordpress', version: '6.6.2' }),
    ].map((r) => (r!.body as { wp_command: string }).wp_command);
    expect(made).toEqual([
      'wp plugin install jetpack --version=3.0.0 --force',
      'wp theme install twentytwentyfour --version=1.2 --force',
      'wp core update --version=6.6.2 --force',
    ]);
    for (const command of made) expect(command).toMatch(WP_COMMAND);
  });

  it('a slug or version from the listing outside the patterns never reaches a command', () => {
    for (const [name, version] of [
      ['jetpack', '3.0.0\n'],
      ['jetpack', '3.0.0 --path=/'],
      ['jetpack', 'latest'],
      ['--skip-plugins', '3.0.0'],
      ['jet pack', '3.0.0'],
      ['jetpack;rm', '3.0.0'],
      ["jet'pack", '3.0.0'],
    ])
      expect(ITEM_WRITES.plugin.putBack('e1', { name: name!, version: version! }), `${name} ${version}`).toBeUndefined();
    expect(ITEM_WRITES.core.putBack('e1', { name: 'wordpress', version: '6.6' })).toBeDefined();
    expect(ITEM_WRITES.core.putBack('e1', { name: 'wordpress', version: '6.6-beta' })).toBeUndefined();
  });

  it('a write is put back item by item from what it replaced; one item it cannot name sends none (the backup then)', () => {
    expect(commandsOf(bulk('jetpack 3.0.0 → 3.1.0, akismet 5.0 → 5.1', ['jetpack', 'akismet']))).toMatchObject({
      status: 'sending',
      commands: [
        { kind: 'plugin', name: 'jetpack', version: '3.0.0', wp_command: 'wp plugin install jetpack --version=3.0.0 --force', status: 'not sent' },
        { kind: 'plugin', name: 'akismet', version: '5.0', wp_command: 'wp plugin install akismet --version=5.0 --force', status: 'not sent' },
      ],
    });
    expect(commandsOf(bulk('jetpack 3.0.0-rc1 → 3.1.0, akismet 5.0 → 5.1', ['jetpack', 'akismet']))).toMatchObject({
      status: 'not sent',
      commands: [],
      reason: expect.stringMatching(/^jetpack 3\.0\.0-rc1: not a slug and numbered version/) as unknown,
    });
    expect(commandsOf(bulk('', ['jetpack']))).toMatchObject({ status: 'not sent' });
  });
});
