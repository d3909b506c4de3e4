import { EventEmitter } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';

/** A stream a command prints to: a terminal, a pipe or a file, or a test's buffer. */
export interface Output {
  write(text: string): unknown;
  /** A terminal: progress lines, colour and human log lines are for it alone. */
  isTTY?: boolean;
}

/** What delivers SIGINT, SIGTERM (and SIGHUP, a closed terminal) to a command: the process, or a test. */
export interface Signals {
  on(signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP', handler: (signal: NodeJS.Signals) => void): unknown;
  off(signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP', handler: (signal: NodeJS.Signals) => void): unknown;
}

/**
 * Everything a command takes from, and gives to, the world outside its arguments: the streams, the
 * environment, the signals and the exit code. The CLI's entry point passes the process's own; a test
 * passes its own and runs commands in-process. No command touches `process.*` for these.
 */
export interface Io {
  stdout: Output;
  stderr: Output;
  stdin: Readable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  signals: Signals;
  /** As `process.exitCode`: what the command ends with, unless an error decides. */
  exitCode: number;
  /** A second Ctrl-C: stop at once (the journal holds everything); a test's io throws instead. */
  exitNow(code: number): never;
  /** The wall clock release ages are judged by (ms since the epoch); a test passes its own, nothing else can. */
  now(): number;
}

/** The process's own streams, environment and signals: what `bin` runs with. */
export function processIo(): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    signals: process,
    get exitCode() {
      return Number(process.exitCode ?? 0);
    },
    set exitCode(code: number) {
      process.exitCode = code;
    },
    exitNow: (code) => process.exit(code),
    now: () => Date.now(),
  };
}

/** A buffer that collects what a command printed, with whether it pretends to be a terminal. */
export class Captured implements Output {
  text = '';
  constructor(readonly isTTY = false) {}
  write(text: string): boolean {
    this.text += text;
    return true;
  }
}

export interface CapturedIo extends Io {
  stdout: Captured;
  stderr: Captured;
  /** Delivers SIGINT, SIGTERM or SIGHUP to the command, as the process would. */
  signals: Signals & { emit(signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP', name: string): boolean };
}

/** An io for running a command in-process: captured output, the given environment, input and clock, no process signals. */
export function capturedIo(options: { env?: Record<string, string | undefined>; input?: string; tty?: boolean; now?: () => number } = {}): CapturedIo {
  const stdin = Object.assign(new PassThrough(), { isTTY: options.tty === true });
  stdin.end(options.input ?? '');
  return {
    stdout: new Captured(options.tty),
    stderr: new Captured(options.tty),
    stdin,
    env: { ...options.env },
    signals: new EventEmitter(),
    exitCode: 0,
    exitNow(code) {
      throw new ExitNow(code);
    },
    now: options.now ?? (() => Date.now()),
  };
}

/** The in-process form of a hard stop: main turns it into its exit code. */
export class ExitNow extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}
