import { createRequire } from 'node:module';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, KeywordCxt } from 'ajv';
import type { InputProblem } from '../errors.js';
import { tooLong } from './duration.js';
import { formats, isDeniedIp, pastMaxAge, pastMaxDuration } from './ajv-runtime.js';

export { isDeniedIp };

// ajv is loaded only when a schema is compiled at run time: the built CLI's validators were compiled at
// build time (util/validators.ts), and loading ajv's compiler costs more than a command's start-up.
const require = createRequire(import.meta.url);

/**
 * One configured ajv for every schema in the project: draft 2020-12, formats, all errors. With
 * `standalone`, it compiles to code that names `sitefleet` (util/ajv-runtime.ts) for what is ours.
 */
export function createAjv(options: { standalone?: boolean } = {}): Ajv2020 {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const { _ } = require('ajv') as typeof import('ajv');
  const ajv = new Ajv2020({
    allErrors: true,
    verbose: true,
    strict: true,
    strictTypes: false,
    strictRequired: false,
    allowUnionTypes: true,
    // Our schemas are checked against the draft's meta-schema by test/schemas.test.ts, not at every start (it costs ~50 ms).
    validateSchema: false,
    code: options.standalone ? { source: true, esm: true, formats: _`sitefleet.formats` } : {},
  });
  for (const [name, format] of Object.entries(formats)) ajv.addFormat(name, format as never);
  // Draft 2020 annotation keywords that editors read but ajv has no use for.
  ajv.addKeyword({ keyword: 'x-secret', schemaType: 'boolean' });
  // A duration past its limit (see LONGEST in util/duration.ts), or an age past its own (LONGEST_AGE,
  // which may pass a timer's); one that is no duration at all is the pattern's to say.
  const limits = [
    { keyword: 'maxDuration', ref: pastMaxDuration, code: _`sitefleet.pastMaxDuration` },
    { keyword: 'maxAge', ref: pastMaxAge, code: _`sitefleet.pastMaxAge` },
  ];
  for (const { keyword, ref, code } of limits)
    ajv.addKeyword({
      keyword,
      type: 'string',
      schemaType: 'string',
      code(cxt: KeywordCxt) {
        const past = cxt.gen.scopeValue('func', { ref, code });
        cxt.fail(_`${past}(${cxt.data}, ${cxt.schemaCode})`);
      },
    });
  return ajv;
}

/** `/tasks/2/with/ip_list/1` → `tasks.2.with.ip_list.1` */
export function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

/** Turns ajv's errors into one readable problem per field, dropping the noise of `anyOf`/`if` wrappers. */
export function ajvProblems(errors: ErrorObject[] | null | undefined, prefix = ''): InputProblem[] {
  const out: (InputProblem & { keyword: string })[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    let path = pointerToPath(e.instancePath);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      path = path ? `${path}.${extra}` : extra;
      message = 'is not a known field';
    } else if (e.keyword === 'required') {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      path = path ? `${path}.${missing}` : missing;
      message = 'is required';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'format') {
      message = `${JSON.stringify(e.data)} is not a valid ${describeFormat((e.params as { format: string }).format)}`;
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    } else if (e.keyword === 'maxDuration') {
      message = tooLong(String(e.data), String(e.schema)) ?? message;
    } else if (e.keyword === 'maxAge') {
      message = tooLong(String(e.data), String(e.schema), 'age') ?? message;
    } else if (e.keyword === 'pattern' && (e.parentSchema as { maxAge?: string })?.maxAge) {
      message = `${truncate(JSON.stringify(e.data))} is not an age such as 12h, 3d or 1d12h`;
    } else if (e.keyword === 'pattern' && (e.parentSchema as { maxDuration?: string })?.maxDuration) {
      message = `${truncate(JSON.stringify(e.data))} is not a duration such as 500ms, 30s, 5m or 1h30m`;
    } else if (e.keyword === 'pattern' && (e.parentSchema as { 'x-secret'?: boolean })?.['x-secret']) {
      // The value written here is the secret itself: it is not repeated (the line goes to terminals and CI logs).
      message = `is not ${(e.parentSchema as { description?: string }).description ?? 'a ${ENV_VAR} reference'} (the value is not shown: it is a secret)`;
    } else if (e.keyword === 'pattern') {
      message = `${truncate(JSON.stringify(e.data))} does not match ${(e.parentSchema as { description?: string })?.description ?? `the pattern ${(e.params as { pattern: string }).pattern}`}`;
    }
    const full = prefix && path ? `${prefix}.${path}` : prefix || path;
    const key = `${full}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path: full, message, keyword: e.keyword });
  }
  return simplifyAlternatives(out);
}

/**
 * A value checked against alternatives (`oneOf`) fails each branch: a selector given as an object with
 * a typo also "must be string", a `health:` object with a field too long also "must be true". Keep the
 * specific errors; merge the bare ones (a type, a constant) into one.
 */
function simplifyAlternatives(problems: (InputProblem & { keyword: string })[]): InputProblem[] {
  const bare = (p: { keyword: string }) => p.keyword === 'type' || p.keyword === 'const';
  const specific = problems.filter((p) => !bare(p));
  const out: InputProblem[] = [];
  const typeErrors = new Map<string, string[]>();
  for (const p of problems) {
    if (!bare(p)) {
      out.push({ path: p.path, message: p.message });
      continue;
    }
    const within = (q: InputProblem) => q.path === p.path || q.path.startsWith(`${p.path}.`) || p.path === '';
    if (specific.some(within)) continue;
    const list = typeErrors.get(p.path) ?? [];
    list.push(p.message.replace(/^must be /, ''));
    typeErrors.set(p.path, list);
  }
  for (const [path, kinds] of typeErrors) out.push({ path, message: `must be ${kinds.join(' or ')}` });
  return out;
}

function describeFormat(format: string): string {
  switch (format) {
    case 'denied-ip':
      return 'IP entry (IPv4, IPv4 with a prefix such as /32, or IPv6)';
    case 'uuid':
      return 'UUID';
    case 'email':
      return 'e-mail address';
    case 'ipv4':
      return 'IPv4 address';
    case 'hostname':
      return 'domain name';
    default:
      return format;
  }
}

function truncate(s: string, max = 80): string {
  return s.length > max ? `${s.slice(0, max)}…"` : s;
}
