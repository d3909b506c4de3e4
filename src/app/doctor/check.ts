/** One line of `doctor`: what was checked, how it went, and what was seen. */
export interface Check {
  check: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}
