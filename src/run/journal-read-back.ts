import { InvalidInputError, UsageError } from '../errors.js';
import { planReadBackProblems } from '../plan/read-back.js';
import { InputFileError, readInputFile } from '../util/input-file.js';
import { firstProblems, JsonProblem, parseJsonText, readBackValidator } from '../util/json-input.js';
import { foldJournal, NoStartRecordError, type JournalRecord, type JournalState } from './journal.js';

/** A journal holds its plan (some 40 MB for 50,000 steps) and a few records per step; past this it is not one. */
const MAX_JOURNAL_BYTES = 512 << 20;

/**
 * Reads a run's journal back for `resume` and `status`, as data from a folder others may write:
 * every record is checked against `schemas/journal-record.schema.json` (ids, UUIDs, the plan's
 * schema) and the start record's plan against the endpoint table, before anything of it is used. A
 * record that is not one is exit 2 naming the journal's line and the field. A torn last line (the
 * process was killed mid-write) is ignored, as `readJournal` does.
 */
export function readJournalBack(path: string): JournalState {
  const records = readJournalRecordsBack(path);
  try {
    return foldJournal(records, path);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * The journal's records, each checked as `readJournalBack` checks them, in order: what a page reads
 * for when each step was sent and ended (the folded state keeps no times).
 */
export function readJournalRecordsBack(path: string): JournalRecord[] {
  let text: string;
  try {
    text = readInputFile(path, MAX_JOURNAL_BYTES);
  } catch (error) {
    if (error instanceof InputFileError) throw new UsageError(`the journal: ${error.message}`);
    throw error;
  }
  const lines = text.split('\n');
  const records: JournalRecord[] = [];
  const validate = readBackValidator('journal-record.schema.json');
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    let record: unknown;
    try {
      record = parseJsonText(line, 'journal record');
    } catch (error) {
      if (!(error instanceof JsonProblem)) throw error;
      if (i >= lines.length - 2 && error.message.startsWith('not JSON')) break; // the last line, cut short by a kill
      throw new InvalidInputError([{ file: path, line: i + 1, path: '', message: error.message }]);
    }
    if (!validate(record)) throw new InvalidInputError(firstProblems(validate, 'journal record').map((p) => ({ file: path, line: i + 1, ...p })));
    records.push(record as JournalRecord);
  }
  const start = records[0];
  if (start?.t !== 'start') throw new NoStartRecordError(`${path} has no complete start record: its run was stopped before it sent anything`);
  const problems = planReadBackProblems(start.plan);
  if (problems.length > 0) throw new InvalidInputError(problems.slice(0, 1).map((p) => ({ file: path, line: 1, ...p, path: `plan.${p.path}` })));
  return records;
}
