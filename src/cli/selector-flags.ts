import type { Command } from 'commander';
import type { Selector } from '../playbook/types.js';

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',').filter(Boolean)];

/** `--site GLOB`, `--environment GLOB`, `--theme GLOB`, `--ids UUID,…`: each repeatable, as a playbook's selector fields. */
export function addSelectorFlags(command: Command): Command {
  return command
    .option('--site <glob>', 'only sites whose name matches (repeatable)', collect)
    .option('--environment <glob>', 'only environments whose name matches, e.g. live (repeatable)', collect)
    .option('--theme <glob>', 'only environments with a theme whose slug matches (repeatable)', collect)
    .option('--ids <uuid,…>', 'only these environment ids (repeatable)', collect);
}

export interface SelectorFlags {
  site?: string[];
  environment?: string[];
  theme?: string[];
  ids?: string[];
}

/** The flags as the selector a playbook would write; unset flags select everything. */
export function selectorFrom(flags: SelectorFlags): Selector {
  return { site: flags.site, environment: flags.environment, theme: flags.theme, ids: flags.ids };
}
