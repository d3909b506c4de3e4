import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { InputProblem } from '../errors.js';
import { isDeniedIp } from '../util/ajv.js';
import type { Action } from './action.js';
import { field, withBlock } from './schema-parts.js';

function readIpFile(path: string): { lines: { line: number; text: string }[] } {
  const lines = readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .map((raw, i) => ({ line: i + 1, text: raw.replace(/#.*/, '').trim() }))
    .filter((l) => l.text !== '');
  return { lines };
}

type DeniedIpsWith = { ip_list?: string[]; ip_list_file?: string };

/** Replaces each environment's denied IP list with the given one (the API has no add or remove). */
export const deniedIpsSet: Action<DeniedIpsWith> = {
  name: 'denied_ips.set',
  summary: 'replace the denied IP list (PUT /sites/tools/denied-ips)',
  scope: 'environment',
  endpoint: 'setDeniedIps',
  creates: false,
  withSchema: {
    ...withBlock({
      ip_list: field('denied-ips', 'ip_list'),
      ip_list_file: { type: 'string', minLength: 1, description: 'a file with one IP entry a line (# starts a comment), relative to the playbook' },
    }),
    oneOf: [{ required: ['ip_list'] }, { required: ['ip_list_file'] }],
  },
  check(w, baseDir) {
    if (typeof w?.ip_list_file !== 'string') return [];
    const path = resolve(baseDir, w.ip_list_file);
    let lines;
    try {
      lines = readIpFile(path).lines;
    } catch (error) {
      return [{ path: 'ip_list_file', message: `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` }];
    }
    const problems: InputProblem[] = lines
      .filter((l) => !isDeniedIp(l.text))
      .map((l) => ({
        file: path,
        line: l.line,
        column: 1,
        path: 'ip_list_file',
        message: `${JSON.stringify(l.text)} is not an IPv4 address, IPv4 with a prefix such as /32, or IPv6 address`,
      }));
    return problems;
  },
  prepare(w, baseDir) {
    if (typeof w.ip_list_file !== 'string') return w;
    const { ip_list_file, ...rest } = w;
    return { ...rest, ip_list: readIpFile(resolve(baseDir, ip_list_file)).lines.map((l) => l.text) };
  },
  expandEnvironment(env, ctx) {
    const ipList = [...new Set<string>(ctx.with.ip_list ?? [])];
    return [{ request: { endpoint: 'setDeniedIps', params: {}, body: { environment_id: env.id, ip_list: ipList } } }];
  },
};
