import { InvalidArgumentError } from 'commander';
import { UsageError } from '../errors.js';
import { MAX_TIMER_MS, parseDuration, tooLong } from '../util/duration.js';

/** A commander argument parser for a whole number within bounds. */
export function intOption(flag: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${flag} takes a whole number from ${min} to ${max}`);
    return n;
  };
}

/** `100-200` → [100, 200]: milliseconds the simulator waits, so no more than a timer holds. */
export function rangeOption(flag: string) {
  return (value: string): [number, number] => {
    const m = /^(\d+)(?:-(\d+))?$/.exec(value.trim());
    if (!m) throw new InvalidArgumentError(`${flag} takes MIN-MAX in ms, e.g. 100-200`);
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : Number(m[2]);
    if (max < min) throw new InvalidArgumentError(`${flag}: ${max} is less than ${min}`);
    if (max > MAX_TIMER_MS) throw new InvalidArgumentError(`${flag}: ${max} ms is longer than a timer holds (${MAX_TIMER_MS})`);
    return [min, max];
  };
}

/** A commander argument parser for a share from 0 to 1. */
export function shareOption(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !(n >= 0 && n <= 1)) throw new InvalidArgumentError(`${flag} takes a share from 0 to 1, e.g. 0.1`);
    return n;
  };
}

/** What a duration flag takes: at most `max`, said as `example`; an `age` may be longer than a timer can wait. */
export interface DurationLimit {
  max: string;
  example: string;
  kind?: 'timer' | 'age';
}

/**
 * A flag's duration in milliseconds: one such as `example`, and at most `max` (a limit from LONGEST
 * or LONGEST_AGE in util/duration.ts). Anything else is exit 2, one line naming the flag.
 */
export function durationFlag(flag: string, text: string, { max, example, kind = 'timer' }: DurationLimit): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`${flag} ${JSON.stringify(text)} is not a duration such as ${example}`);
  const problem = tooLong(text, max, kind);
  if (problem) throw new UsageError(`${flag} ${problem}`);
  return ms;
}

/** `durationFlag` as a commander argument parser: checked as the command line is read, before anything else. */
export function durationOption(flag: string, max: string, example: string) {
  return (text: string): number => durationFlag(flag, text, { max, example });
}
