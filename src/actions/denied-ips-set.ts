import { resolve } from 'node:path';
import type { InputProblem } from '../errors.js';
import { isDeniedIp } from '../util/ajv.js';
import { quoteStart, readInputFile } from '../util/input-file.js';
import type { Action } from './action.js';
import { field, withBlock } from './schema-parts.js';

/** The API takes at most 10,000 entries; a file of them, with comments, fits well in a megabyte. */
const MAX_ENTRIES = 10_000;
const MAX_FILE_BYTES = 1 << 20;
/** Lines reported at most: a file that is not an IP list at all needs one line to say so, not thousands. */
const MAX_REPORTED = 5;

function readIpFile(path: string): { lines: { line: number; text: string }[] } {
  const lines = readInputFile(path, MAX_FILE_BYTES)
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
      return [{ path: 'ip_list_file', message: (error as Error).message }];
    }
    if (lines.length > MAX_ENTRIES) return [{ path: 'ip_list_file', message: `${path} holds ${lines.length} entries; the API takes at most ${MAX_ENTRIES}` }];
    const bad = lines.filter((l) => !isDeniedIp(l.text));
    // Quote only the start of a line: the file may be anything (a user once pointed this at /etc/shadow).
    const more = bad.length > MAX_REPORTED ? ` (and ${bad.length - MAX_REPORTED} more lines like it)` : '';
    const problems: InputProblem[] = bad.slice(0, MAX_REPORTED).map((l, i) => ({
      file: path,
      line: l.line,
      column: 1,
      path: 'ip_list_file',
      message: `${quoteStart(l.text)} is not an IPv4 address, IPv4 with a prefix such as /32, or IPv6 address${i === MAX_REPORTED - 1 ? more : ''}`,
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
