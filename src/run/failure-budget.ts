/**
 * `max_failures`: how many of a task's steps may fail (or end unknown) before the run stops.
 * A count (`5`) or a percentage of the task's steps (`5%`, rounded down, so `5%` of 10 steps
 * allows none). `100%` never stops the run. Without a setting, any number of failures is allowed.
 */
export interface FailureBudget {
  /** Counts one failure; true when the budget is now exceeded. */
  fail(): boolean;
  describe(): string;
}

export function failureBudget(setting: number | string | undefined, steps: number): FailureBudget {
  let allowed = Infinity;
  let label = 'unlimited';
  if (typeof setting === 'number') {
    allowed = setting;
    label = String(setting);
  } else if (typeof setting === 'string') {
    const percent = Number(setting.replace('%', ''));
    allowed = percent >= 100 ? Infinity : Math.floor((steps * percent) / 100);
    label = `${setting} of ${steps} steps = ${allowed === Infinity ? 'all' : allowed}`;
  }
  let failures = 0;
  return {
    fail() {
      failures++;
      return failures > allowed;
    },
    describe() {
      return `${failures} failed, ${label} allowed`;
    },
  };
}
