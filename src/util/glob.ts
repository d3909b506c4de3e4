import picomatch from 'picomatch';

/** Display names are matched case-insensitively; `*`, `?`, `[a-z]` and `{a,b}` work as in a shell. */
const cache = new Map<string, (s: string) => boolean>();

export function globMatcher(pattern: string): (s: string) => boolean {
  let fn = cache.get(pattern);
  if (!fn) {
    fn = picomatch(pattern, { nocase: true, dot: true });
    cache.set(pattern, fn);
  }
  return fn;
}

export function matchesAny(value: string, patterns: string | string[] | undefined): boolean {
  if (patterns === undefined) return true;
  const list = Array.isArray(patterns) ? patterns : [patterns];
  return list.some((p) => globMatcher(p)(value));
}
