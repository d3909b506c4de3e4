import { InvalidArgumentError } from 'commander';

/** A commander argument parser for a whole number within bounds. */
export function intOption(flag: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${flag} takes a whole number from ${min} to ${max}`);
    return n;
  };
}

/** `100-200` → [100, 200] */
export function rangeOption(flag: string) {
  return (value: string): [number, number] => {
    const m = /^(\d+)(?:-(\d+))?$/.exec(value.trim());
    if (!m) throw new InvalidArgumentError(`${flag} takes MIN-MAX in ms, e.g. 100-200`);
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : Number(m[2]);
    if (max < min) throw new InvalidArgumentError(`${flag}: ${max} is less than ${min}`);
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
