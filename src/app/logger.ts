import { pino, type Logger } from 'pino';
import { openAppend } from '../util/output-file.js';
import { forTerminal } from '../util/safe-text.js';
import type { Output } from './io.js';
import { flushLogs, trackLogFile } from './log-files.js';

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
  'result.private_output',
  'result.operation_data',
];

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };
const NOT_SHOWN = new Set(['level', 'time', 'app', 'msg', 'pid', 'hostname']);

/**
 * A person reads `sitefleet: warning: run stopping (reason: …)`, not JSON: the same redacted record,
 * as one short line, on stderr whether it is a terminal or a pipe (a cron mail, a CI log are read by
 * people too). JSON lines only when asked (`--log-format json`) or to a file (`--log-file`).
 */
export function humanLine(json: string): string {
  const record = JSON.parse(json) as Record<string, unknown>;
  const fields = Object.entries(record)
    .filter(([k, v]) => !NOT_SHOWN.has(k) && v !== null && v !== undefined)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  // The record holds service text (names, messages): the line follows the terminal rule.
  return `sitefleet: ${LEVELS[record.level as number] ?? 'log'}: ${forTerminal(`${String(record.msg)}${fields.length ? ` (${fields.join(', ')})` : ''}`)}\n`;
}

/** A record as stderr shows it; on a terminal the line first wipes the progress line it would break. */
function stderrLine(json: string, format: LogFormat, tty: boolean): string {
  if (format === 'json') return json;
  return tty ? `\r\x1b[K${humanLine(json)}` : humanLine(json);
}

let flushAtExit = false;

/** How log lines reach stderr: short lines for a person, or JSON lines for a machine (`--log-format`). */
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** JSON lines to `file`; to `stderr`, short human lines unless `format` is json. */
export function createLogger(options: { level?: string; file?: string; format?: LogFormat; stderr: Output }): Logger {
  const level = options.level ?? (options.file ? 'info' : 'warn');
  // A file is written in buffered chunks (a syscall per line would cost more than the call it logs)
  // and flushed when the command ends; stderr is written at once, so a person sees it as it happens.
  // The file is appended to only if it is a regular file and a sitefleet log, never through a link (openAppend).
  const settings = { level, base: { app: 'sitefleet' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, timestamp: pino.stdTimeFunctions.isoTime };
  const { stderr } = options;
  if (!options.file) return pino(settings, { write: (line: string) => void stderr.write(stderrLine(line, options.format ?? 'text', stderr.isTTY === true)) });
  const destination = pino.destination({ fd: openAppend({ flag: '--log-file', path: options.file, kind: 'log' }), sync: false, minLength: 8 * 1024 });
  trackLogFile(destination);
  // A hard stop (a second Ctrl-C exits at once) skips main's end: the lines logged so far still land.
  if (!flushAtExit) flushAtExit = Boolean(process.once('exit', flushLogs));
  return pino(settings, destination);
}
