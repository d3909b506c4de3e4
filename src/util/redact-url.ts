/**
 * A URL as it may be printed or logged: whatever stands between its `//` (or its start, when it has
 * none) and its last `@` is credentials (`user:password@`, `:password@`, a password given where the
 * user name goes) and is shown as `***`. It works on text that does not parse as a URL, since a
 * malformed URL (`rediss//:pw@host`) is exactly the one an error quotes. The last `@`, not the first:
 * a password may hold an `@` or a `/` its writer did not encode.
 */
export function redactUrl(text: string): string {
  const at = text.lastIndexOf('@');
  if (at === -1) return text;
  const start = /^(?:[A-Za-z][A-Za-z0-9+.-]*:?)?\/\//.exec(text)?.[0].length ?? 0;
  return `${text.slice(0, start)}***${text.slice(at)}`;
}
