import { describe, expect, it } from 'vitest';
import { afterUpdateEffect, databaseUpdateRequired, filesMove, NOT_MULTISITE, NOT_REGISTERED } from '../../src/sim/after-update.js';
import type { SimEnvironment } from '../../src/sim/fleet.js';

const env = (version: string, plugins: string[] = []) =>
  ({ wordpressVersion: version, plugins: new Map(plugins.map((p) => [p, { version: '1.0.0' }])) }) as unknown as SimEnvironment;
const words = (command: string) => command.split(/\s+/);
const apply = (e: SimEnvironment, command: string, fails = false) => {
  const effect = afterUpdateEffect(e, words(command), fails);
  if (effect && 'apply' in effect) effect.apply(e);
  return effect;
};

describe("the simulator's database step", () => {
  it('files moved across an x.y release leave "Database update required" until wp core update-db; within one, or back, none', () => {
    const e = env('6.6.2');
    filesMove(e, '6.7.2');
    expect([databaseUpdateRequired(e), e.wordpressDb]).toEqual([true, '6.6.2']);
    expect(apply(e, 'wp core update-db --dry-run')).toHaveProperty('apply');
    expect(databaseUpdateRequired(e)).toBe(true);
    apply(e, 'wp core update-db');
    expect([databaseUpdateRequired(e), e.wordpressDb]).toEqual([false, undefined]);
    filesMove(e, '6.7.1');
    expect(databaseUpdateRequired(e)).toBe(false);
  });

  it('--network fails (no simulated multisite), an unknown flag fails, coreUpdateDbFails fails; wp wc update needs WooCommerce', () => {
    const e = env('6.7.2', ['woocommerce']);
    expect(afterUpdateEffect(e, words('wp core update-db --network'), false)).toEqual({ failsWith: NOT_MULTISITE });
    expect(afterUpdateEffect(e, words('wp core update-db --all'), false)).toEqual({ failsWith: 'Error: Parameter errors: unknown --all parameter' });
    expect(afterUpdateEffect(e, words('wp core update-db'), true)).toHaveProperty('failsWith');
    expect(afterUpdateEffect(e, words('wp wc update'), false)).toHaveProperty('apply');
    expect(afterUpdateEffect(env('6.7.2'), words('wp wc update'), false)).toEqual({ failsWith: NOT_REGISTERED('wc') });
    expect(afterUpdateEffect(e, words('wp core version'), false)).toBeUndefined();
  });
});
