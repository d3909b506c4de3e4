import { pino, type Logger } from 'pino';

/**
 * Paths pino blanks out: the token, passwords, SSL keys, login links. Explicit paths only: sitefleet
 * never logs a request body or a step's output, and pino's wildcard paths cost several microseconds
 * on every line, which the per-step log of a 20,000-step run would pay 40,000 times.
 */
export const REDACT_PATHS = [
  'token',
  'authorization',
  'headers.authorization',
  'password',
  'admin_password',
  'custom_ssl_key',
  'login_link',
  'output',
  'body.admin_password',
  'body.custom_ssl_key',
  'result.output',
];

/** JSON lines to stderr, or to `file`; `silent` when nothing should be written. */
export function createLogger(options: { level?: string; file?: string }): Logger {
  const level = options.level ?? (options.file ? 'info' : 'warn');
  // A file is written in buffered chunks (a syscall per line would cost more than the call it logs)
  // and flushed when the process exits; stderr is written at once, so a person sees it as it happens.
  const destination = options.file
    ? pino.destination({ dest: options.file, sync: false, mkdir: true, append: true, minLength: 8 * 1024 })
    : pino.destination({ fd: 2, sync: true });
  if (options.file) process.once('exit', () => destination.flushSync());
  return pino(
    { level, base: { app: 'sitefleet' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, timestamp: pino.stdTimeFunctions.isoTime },
    destination,
  );
}
