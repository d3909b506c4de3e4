import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, realpathSync, statSync, writeSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { InvalidInputError, UsageError, type InputProblem } from '../errors.js';
import { writeFileAtomic, writeFileAtomicAsync } from './atomic-write.js';

/**
 * The rule for every file sitefleet writes: it replaces (or appends to) only a file of its own kind
 * or nothing, never one of the command's inputs (the playbook, the saved plan, the sites file, the
 * run's journal…) nor another output's path, never through a link, never over a folder, a FIFO or a
 * device. Commands check all their outputs when they start, before anything is sent (`checkOutputs`);
 * each write looks again at the path's type as it writes (`writeOutput`, `openAppend`).
 */
export type OutputKind =
  'report' | 'plan' | 'junit' | 'summary-md' | 'login-links' | 'command-output' | 'log' | 'step-summary' | 'metrics' | 'html' | 'pdf' | 'png';

export interface OutputFile {
  /** How the user named it, for messages: `--junit`, `GITHUB_STEP_SUMMARY`, `report`. */
  flag: string;
  path: string;
  kind: OutputKind;
  /** A playbook field names it (a task's `output_file`): a refusal is located there. */
  field?: Omit<InputProblem, 'message'>;
}

/** A file the command reads, or keeps beside its outputs (the journal): no output may be it. */
export interface InputFile {
  /** What it is, for messages: `the playbook`, `the run's journal`. */
  what: string;
  path: string;
}

interface Kind {
  /** What a file of the kind is, for "exists and is not …". */
  name: string;
  /** Appended to (a log), not replaced. */
  append?: true;
  mode: number;
  /** How an existing file is recognised as one of the kind; without it, any regular file is. */
  own?: {
    /** How much of the file is read; a longer JSON file is not one sitefleet wrote. */
    bytes: number;
    /** `whole` when `text` is all of the file. */
    test(text: string, whole: boolean): boolean;
  };
}

/** The columns of a command-output CSV file, in order (its header line is how such a file is known). */
export const COMMAND_OUTPUT_COLUMNS = ['site', 'environment', 'env_id', 'status', 'output'] as const;

/** A plan of 50,000 steps is some 40 MB of JSON, its report less: past this, a file is not one sitefleet wrote. */
const MAX_JSON_BYTES = 256 << 20;
const HEAD_BYTES = 64 << 10;

/**
 * How each kind recognises a file of its own. JSON outputs are parsed whole and must have their
 * shape's own fields (a plan is no report and a report no plan). JUnit XML is recognised by its root
 * element, whoever wrote it. Markdown has no shape: a summary sitefleet wrote starts with its own
 * heading, so only a file starting so is replaced. A log is appended to only if its first line is a
 * sitefleet log record. GitHub's step summary is GitHub's file, appended to by design whatever the
 * steps before wrote in it. An empty file holds nothing to lose (`mktemp` makes one): every kind takes it.
 */
const KINDS: Record<OutputKind, Kind> = {
  report: {
    name: 'a sitefleet report',
    mode: 0o644,
    own: { bytes: MAX_JSON_BYTES, test: jsonWith((v) => v.version === 1 && typeof v.run_id === 'string' && Array.isArray(v.results)) },
  },
  plan: {
    name: 'a sitefleet plan',
    mode: 0o644,
    own: {
      bytes: MAX_JSON_BYTES,
      test: jsonWith((v) => v.version === 1 && Array.isArray(v.steps) && Array.isArray(v.skipped) && typeof v.company === 'string' && !('run_id' in v)),
    },
  },
  junit: {
    name: 'JUnit XML',
    mode: 0o644,
    own: { bytes: HEAD_BYTES, test: (text) => /^\uFEFF?\s*(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*<testsuites?[\s/>]/.test(text) },
  },
  'summary-md': { name: 'a sitefleet Markdown summary', mode: 0o644, own: { bytes: HEAD_BYTES, test: (text) => text.startsWith('### sitefleet: ') } },
  // Login links are secrets: the file is private (0600), and only a file of links (a JSON array of them) is replaced by one.
  'login-links': { name: 'a login-links file', mode: 0o600, own: { bytes: MAX_JSON_BYTES, test: jsonArrayOf((v) => typeof v.login_link === 'string') } },
  // What commands printed may hold anything the sites hold: private too, and replaced only by its own kind.
  'command-output': {
    name: 'a sitefleet command-output file',
    mode: 0o600,
    own: {
      bytes: MAX_JSON_BYTES,
      test: (text, whole) => text.startsWith(`${COMMAND_OUTPUT_COLUMNS.join(',')}\n`) || jsonArrayOf((v) => 'env_id' in v && 'output' in v)(text, whole),
    },
  },
  log: { name: 'a sitefleet log', append: true, mode: 0o644, own: { bytes: HEAD_BYTES, test: (text) => isSitefleetLogLine(text.split('\n')[0]!) } },
  'step-summary': { name: "GitHub's step summary", append: true, mode: 0o644 },
  // Prometheus' text format, shared by the playbooks that name the file: only a file of sitefleet's own metrics is replaced.
  metrics: {
    name: "a sitefleet metrics file (Prometheus' text format)",
    mode: 0o644,
    own: { bytes: MAX_JSON_BYTES, test: (text, whole) => whole && text.split('\n').every((l) => l === '' || /^(# (HELP|TYPE) )?sitefleet_/.test(l)) },
  },
  // A page sitefleet wrote begins with its own head (the policy that it loads nothing); no other page is replaced.
  html: { name: 'a sitefleet page', mode: 0o644, own: { bytes: HEAD_BYTES, test: (text) => text.startsWith(HTML_HEAD) } },
  // A PDF is recognised by its header, whoever printed it (as JUnit by its root element).
  pdf: { name: 'a PDF', mode: 0o644, own: { bytes: HEAD_BYTES, test: (text) => text.startsWith('%PDF-') } },
  // A screenshot (health.visual) by PNG's signature; its first byte, 0x89, reads as U+FFFD in UTF-8.
  png: { name: 'a PNG image', mode: 0o644, own: { bytes: 16, test: (text) => text.startsWith('\uFFFDPNG\r\n\u001a\n') } },
};

/** How every page sitefleet writes begins (report/html/document.ts writes it; util cannot import from there). */
export const HTML_HEAD = '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy"';

type Fields = Record<string, unknown>;
type Recognise = NonNullable<Kind['own']>['test'];

function jsonWith(test: (value: Fields) => boolean): Recognise {
  return (text, whole) => {
    try {
      const value = whole ? (JSON.parse(text) as unknown) : undefined;
      return typeof value === 'object' && value !== null && !Array.isArray(value) && test(value as Fields);
    } catch {
      return false;
    }
  };
}

function jsonArrayOf(test: (value: Fields) => boolean): Recognise {
  return (text, whole) => {
    try {
      const value = whole ? (JSON.parse(text) as unknown) : undefined;
      return Array.isArray(value) && value.every((v) => typeof v === 'object' && v !== null && test(v as Fields));
    } catch {
      return false;
    }
  };
}

function isSitefleetLogLine(line: string): boolean {
  try {
    return (JSON.parse(line) as Fields | null)?.app === 'sitefleet';
  } catch {
    return false;
  }
}

/** Refuses, before anything is sent, any output that would clobber an input, another output, or a file not of its kind. */
export function checkOutputs(outputs: readonly OutputFile[], inputs: readonly InputFile[]): void {
  outputs.forEach((output, i) => {
    const verb = KINDS[output.kind].append ? 'append to' : 'overwrite';
    const why =
      typeRefusal(output) ??
      kindRefusal(output, verb) ??
      inputs.filter((input) => sameFile(output.path, input.path)).map((input) => `is ${input.what}: refusing to ${verb} it`)[0] ??
      outputs
        .slice(0, i)
        .filter((other) => sameFile(output.path, other.path))
        .map((other) => `is also ${other.flag}: two outputs cannot share a file`)[0];
    if (why) throw refusal(output, why);
  });
}

/** Replaces an output whole: temporary file and rename in its folder, so a link at the path is never written through. */
export function writeOutput(output: OutputFile, text: string | Uint8Array): void {
  refuseType(output);
  writeFileAtomic(output.path, text, KINDS[output.kind].mode);
}

/** The same, without holding the event loop (report snapshots during a run). */
export async function writeOutputAsync(output: OutputFile, text: string): Promise<void> {
  refuseType(output);
  await writeFileAtomicAsync(output.path, text, KINDS[output.kind].mode);
}

/**
 * Opens an appended output (a log, GitHub's step summary): O_APPEND, and O_NOFOLLOW so a link put at
 * the path is refused, not followed; what was opened must be a regular file of the output's kind.
 * Returns the descriptor. A log's folder is made, as it always was.
 */
export function openAppend(output: OutputFile): number {
  refuseType(output);
  if (output.kind === 'log') mkdirSync(dirname(resolve(output.path)), { recursive: true });
  let fd: number;
  try {
    fd = openSync(
      output.path,
      constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      KINDS[output.kind].mode,
    );
  } catch (error) {
    throw refusal(output, openProblem(error as NodeJS.ErrnoException));
  }
  try {
    const why = fileTypeProblem(fstatSync(fd)) ?? ownKindProblem(output, fd, 'append to');
    if (why) throw refusal(output, why);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * A folder of outputs (a report's screenshots): made when missing, and otherwise only a real folder
 * of its own, never a link to one, so no file is written through a link someone left at its path.
 */
export function outputFolder(flag: string, path: string): void {
  try {
    mkdirSync(path, { mode: 0o755 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new UsageError(`${flag} ${path} cannot be made (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) throw new UsageError(`${flag} ${path} ${LINK}`);
  if (!stat.isDirectory()) throw new UsageError(`${flag} ${path} is not a folder`);
}

/** Appends `text` to an appended output (see openAppend). */
export function appendOutput(output: OutputFile, text: string): void {
  const fd = openAppend(output);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

function refusal(output: OutputFile, why: string): Error {
  return output.field ? new InvalidInputError([{ ...output.field, message: `${output.path} ${why}` }]) : new UsageError(`${output.flag} ${output.path} ${why}`);
}

function refuseType(output: OutputFile): void {
  const why = typeRefusal(output);
  if (why) throw refusal(output, why);
}

/** What is at the path now, looked at without following a link: nothing (in a folder that exists), or a regular file. */
function typeRefusal(output: OutputFile): string | undefined {
  let stat: Stats;
  try {
    stat = lstatSync(output.path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return `cannot be looked at (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`;
    if (output.kind === 'log') return undefined; // its folder is made when it is opened
    const folder = dirname(resolve(output.path));
    return isFolder(folder) ? undefined : `is in a folder that does not exist (${folder})`;
  }
  return fileTypeProblem(stat);
}

const LINK = 'is a symbolic link: sitefleet writes no output through a link (name the file itself)';

function fileTypeProblem(stat: Stats): string | undefined {
  if (stat.isSymbolicLink()) return LINK;
  if (stat.isDirectory()) return 'is a folder, not a file';
  if (!stat.isFile()) return 'is not a regular file (a FIFO, a socket or a device): refusing to write to it';
  return undefined;
}

function openProblem(error: NodeJS.ErrnoException): string {
  return error.code === 'ELOOP' ? LINK : `cannot be opened (${error.code ?? error.message})`;
}

/** An existing file at the path: refused unless it is of the output's kind (read without following a link, without blocking). */
function kindRefusal(output: OutputFile, verb: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(output.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : openProblem(error as NodeJS.ErrnoException);
  }
  try {
    return fileTypeProblem(fstatSync(fd)) ?? ownKindProblem(output, fd, verb);
  } finally {
    closeSync(fd);
  }
}

function ownKindProblem(output: OutputFile, fd: number, verb: string): string | undefined {
  const { name, own } = KINDS[output.kind];
  const { size } = fstatSync(fd);
  if (size === 0 || !own) return undefined;
  const buffer = Buffer.alloc(Math.min(size, own.bytes));
  let read = 0;
  while (read < buffer.length) {
    const n = readSync(fd, buffer, read, buffer.length - read, read);
    if (n === 0) break;
    read += n;
  }
  return own.test(buffer.subarray(0, read).toString('utf8'), read === size) ? undefined : `exists and is not ${name}: refusing to ${verb} it`;
}

/** One file under two names: the same path, the same place once its folder's links are followed, or the same inode. */
function sameFile(a: string, b: string): boolean {
  if (resolve(a) === resolve(b) || placeOf(a) === placeOf(b)) return true;
  const [sa, sb] = [statOrNone(a), statOrNone(b)];
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino;
}

/** The path with its folder's links followed: two names of one place compare equal even before the file exists. */
function placeOf(path: string): string {
  const full = resolve(path);
  try {
    return join(realpathSync(dirname(full)), basename(full));
  } catch {
    return full;
  }
}

function statOrNone(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function isFolder(path: string): boolean {
  return statOrNone(path)?.isDirectory() === true;
}
