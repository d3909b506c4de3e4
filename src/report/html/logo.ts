import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { UsageError } from '../../errors.js';
import { formatBytes } from '../../util/input-file.js';

/** A logo is a small picture in a header: past this it is not one (and the page must mail). */
const MAX_LOGO_BYTES = 512 << 10;

/**
 * What an SVG may not hold to be embedded: script and event handlers, markup from elsewhere
 * (foreignObject, iframes, objects), entity declarations, and any reference that leaves the file
 * (href or url() to anything but `#id`, an @import). The page shows the logo as an `<img>`, where a
 * browser runs no script and loads nothing anyway; a file that tries is refused, not repaired, so
 * the agency sees why rather than a logo that silently lost parts.
 */
const SVG_REFUSED: readonly [RegExp, string][] = [
  [/<script\b/i, 'a <script> element'],
  [/\son[a-z]+\s*=/i, 'an event handler (on…= attribute)'],
  [/<(foreignObject|iframe|object|embed|image|audio|video)\b/i, 'an element that embeds other content'],
  [/<!(DOCTYPE|ENTITY)\b/i, 'a DOCTYPE or entity declaration'],
  // The lookahead sits right after `=` and `(`: placed after optional quotes, backtracking let `href="#a"` match.
  [/\bhref\s*=(?!\s*["']?\s*#)/i, 'a link to something outside the file (href not "#…")'],
  [/url\((?!\s*["']?\s*#)/i, 'a url() to something outside the file'],
  [/@import\b/i, 'an @import'],
];

/** Reads `--logo FILE` into a `data:` URL (PNG, JPEG, or an SVG that passes the rules above); else exit 2 naming the file. */
export function logoDataUrl(path: string): string {
  const bytes = readLogo(path);
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return dataUrl('image/png', bytes);
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return dataUrl('image/jpeg', bytes);
  const text = bytes.toString('utf8');
  // A DOCTYPE (Illustrator's exports have one) is let through the sniff, to be refused by name below.
  if (!/^\uFEFF?\s*(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<svg[\s/>]/i.test(text))
    throw new UsageError(`--logo ${path}: not a PNG, JPEG or SVG file`);
  const refused = SVG_REFUSED.find(([pattern]) => pattern.test(text));
  if (refused) throw new UsageError(`--logo ${path}: an SVG with ${refused[1]} is refused; save it without, or as PNG`);
  return dataUrl('image/svg+xml', bytes);
}

function dataUrl(type: string, bytes: Buffer): string {
  return `data:${type};base64,${bytes.toString('base64')}`;
}

/** Reads the logo only if it is a regular file of at most MAX_LOGO_BYTES (no FIFO, no device). */
function readLogo(path: string): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new UsageError(`--logo: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`--logo: ${path} is not a regular file`);
    if (stat.size > MAX_LOGO_BYTES)
      throw new UsageError(`--logo: ${path} is ${formatBytes(stat.size)}, more than the ${formatBytes(MAX_LOGO_BYTES)} a logo may be`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
