import type { InputProblem } from '../errors.js';
import { httpUrl, refName } from '../util/secret-ref.js';
import type { PlaybookSettings } from './types.js';

/**
 * The secrets `settings.ping` and `settings.notify` name, checked as the playbook loads: a variable
 * not set is `unset` (an error for plan and run, a warning for validate, whose CI may lack it), a URL
 * that is not http(s) an error. The schema has made each a `${VAR}` reference; no problem quotes a value.
 */
export function channelProblems(
  settings: PlaybookSettings | undefined,
  env: Record<string, string | undefined>,
  unset: (path: string, name: string) => void,
): InputProblem[] {
  const problems: InputProblem[] = [];
  const check = (ref: string | undefined, path: string, isUrl: boolean) => {
    const name = ref === undefined ? undefined : refName(ref);
    if (name === undefined) return;
    const value = env[name];
    if (value === undefined || value === '') return unset(path, name);
    const url = isUrl ? httpUrl(value) : undefined;
    if (url && 'problem' in url) problems.push({ path, message: `the value of ${name} ${url.problem}` });
  };
  check(settings?.ping, 'settings.ping', true);
  settings?.notify?.forEach((n, i) => {
    check(n.url, `settings.notify.${i}.url`, true);
    check(n.secret, `settings.notify.${i}.secret`, false);
  });
  return problems;
}
