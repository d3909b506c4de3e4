import { pino, type Logger } from 'pino';

/** Paths pino blanks out wherever they appear: the token, passwords, SSL keys, login links. */
export const REDACT_PATHS = [
  'token',
  'authorization',
  'headers.authorization',
  'password',
  'admin_password',
  'login_link',
  'custom_ssl_key',
  '*.token',
  '*.authorization',
  '*.password',
  '*.admin_password',
  '*.login_link',
  '*.custom_ssl_key',
  '*.*.admin_password',
  '*.*.custom_ssl_key',
  '*.*.login_link',
];

/** JSON lines to stderr, or to `file`; `silent` when nothing should be written. */
export function createLogger(options: { level?: string; file?: string }): Logger {
  const level = options.level ?? (options.file ? 'info' : 'warn');
  const destination = options.file ? pino.destination({ dest: options.file, sync: true, mkdir: true, append: true }) : pino.destination({ fd: 2, sync: true });
  return pino({ level, base: { app: 'sitefleet' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}
