import type { InputProblem } from '../errors.js';
import { isDeniedIp } from '../util/ajv-runtime.js';
import type { PlaybookFiles } from '../util/input-file.js';
import type { Action } from './action.js';
import { field, withBlock } from './schema-parts.js';

/** The API takes at most 10,000 entries; a file of them, with comments, fits well in a megabyte. */
const MAX_ENTRIES = 10_000;
const MAX_FILE_BYTES = 1 << 20;
/** Lines reported at most: a file that is not an IP list at all needs one line to say so, not thousands. */
const MAX_REPORTED = 5;

function readIpFile(files: PlaybookFiles, name: string): { path: string; lines: { line: number; text: string }[] } {
  const { path, text } = files.read(name, MAX_FILE_BYTES);
  const lines = text
    .split(/\r?\n/)
    .map((raw, i) => ({ line: i + 1, text: raw.replace(/#.*/, '').trim() }))
    .filter((l) => l.text !== '');
  return { path, lines };
}

type DeniedIpsWith = { ip_list?: string[]; ip_list_file?: string };

/** Replaces each environment's denied IP list with the given one (the API has no add or remove). */
export const deniedIpsSet: Action<DeniedIpsWith> = {
  name: 'denied_ips.set',
  summary: 'replace the denied IP list (PUT /sites/tools/denied-ips)',
  scope: 'environment',
  endpoint: 'setDeniedIps',
  creates: false,
  example: { ip_list: ['203.0.113.7', '198.51.100.0/24'] },
  withSchema: {
    ...withBlock({
      ip_list: field('denied-ips', 'ip_list'),
      ip_list_file: { type: 'string', minLength: 1, description: 'a file with one IP entry a line (# starts a comment), relative to the playbook' },
    }),
    oneOf: [{ required: ['ip_list'] }, { required: ['ip_list_file'] }],
  },
  check(w, files) {
    if (typeof w?.ip_list_file !== 'string') return [];
    let path, lines;
    try {
      ({ path, lines } = readIpFile(files, w.ip_list_file));
    } catch (error) {
      return [{ path: 'ip_list_file', message: (error as Error).message }];
    }
    if (lines.length > MAX_ENTRIES) return [{ path: 'ip_list_file', message: `${path} holds ${lines.length} entries; the API takes at most ${MAX_ENTRIES}` }];
    const bad = lines.filter((l) => !isDeniedIp(l.text));
    // Quote nothing of the file: it may be anything (a user once pointed this at /etc/shadow), and
    // `validate` runs on pull requests whose logs are public. The line number says where to look.
    const more = bad.length > MAX_REPORTED ? ` (and ${bad.length - MAX_REPORTED} more lines like it)` : '';
    const problems: InputProblem[] = bad.slice(0, MAX_REPORTED).map((l, i) => ({
      file: path,
      line: l.line,
      column: 1,
      path: 'ip_list_file',
      message: `line ${l.line} is not an IPv4 address, IPv4 with a prefix such as /32, or IPv6 address${i === MAX_REPORTED - 1 ? more : ''}`,
    }));
    return problems;
  },
  prepare(w, files) {
    if (typeof w.ip_list_file !== 'string') return w;
    const { ip_list_file, ...rest } = w;
    return { ...rest, ip_list: readIpFile(files, ip_list_file).lines.map((l) => l.text) };
  },
  // The list replaces the old one whole: its length is what changed, its addresses are the operator's business.
  record(step) {
    const n = ((step.body as { ip_list?: unknown[] } | undefined)?.ip_list ?? []).length;
    return { heading: 'Denied-IP lists', text: `denied-IP list replaced: ${n} ${n === 1 ? 'address' : 'addresses'}` };
  },
  expandEnvironment(env, ctx) {
    const ipList = [...new Set<string>(ctx.with.ip_list ?? [])];
    return [{ request: { endpoint: 'setDeniedIps', params: {}, body: { environment_id: env.id, ip_list: ipList } } }];
  },
};
