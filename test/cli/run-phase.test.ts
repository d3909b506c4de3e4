import { describe, expect, it } from 'vitest';
import { RunPhase } from '../../src/cli/run-phase.js';
import type { Step } from '../../src/plan/plan.js';
import type { RunEvent, StepResult, StepStatus } from '../../src/run/types.js';

const step = (id: string, task = 0) => ({ id, task_index: task }) as Step;
const result = (id: string, status: StepStatus, operation = status === 'accepted'): StepResult => ({
  step_id: id,
  status,
  http_status: status === 'skipped' ? null : 202,
  operation_id: operation ? `op-${id}` : null,
  attempts: 1,
  error: null,
  reason: null,
});
const ev = (type: 'result' | 'update', id: string, status: StepStatus, task = 0): RunEvent => ({ type, step: step(id, task), result: result(id, status) });

describe('the run phase on the progress line', () => {
  it('while sending: sent, running, done, failed, and an ETA that counts the wait for the last operations', () => {
    const phase = new RunPhase(10, new Set([0]));
    expect(phase.line(0)).toBe('sending 0/10 · 0 running · 0 done · 0 failed');
    for (let i = 0; i < 4; i++) phase.onEvent(ev('result', `s${i}`, 'accepted'), i * 1000);
    phase.onEvent(ev('update', 's0', 'succeeded'), 5000); // took 5 s
    phase.onEvent(ev('update', 's1', 'failed'), 6000); // 5 s too
    // 4 sent in 4 s (one a second from the first): 6 more take 6 s, then an operation's 5 s.
    expect(phase.line(4000)).toBe('sending 4/10 · 2 running · 1 done · 1 failed · ETA 11s');
  });

  it('once all is sent: the operations waited for, the next poll, and an ETA from the run’s own operation times, never 0 while waiting', () => {
    const phase = new RunPhase(3, new Set([0]));
    phase.onEvent(ev('result', 'a', 'accepted'), 0);
    phase.onEvent(ev('result', 'b', 'accepted'), 1000);
    phase.onEvent(ev('result', 'c', 'accepted'), 2000);
    expect(phase.line(3000, 1500)).toBe('all 3 sent · waiting for 3 operations · 0 done · 0 failed · next poll in 2s');
    phase.onEvent(ev('update', 'a', 'succeeded'), 10_000);
    // c was accepted at 2 s and operations take 10 s here: about 2 s more.
    expect(phase.line(10_000, 400)).toBe('all 3 sent · waiting for 2 operations · 1 done · 0 failed · next poll in 0s · ETA 2s');
    // Past its typical time, an operation is still not done before the next look at it.
    expect(phase.line(14_000, 3000)).toBe('all 3 sent · waiting for 2 operations · 1 done · 0 failed · next poll in 3s · ETA 3s');
    phase.onEvent(ev('update', 'b', 'succeeded'), 11_000);
    phase.onEvent(ev('update', 'c', 'failed'), 12_000);
    expect(phase.line(12_000)).toBe('all 3 sent · waiting for 0 operations · 2 done · 1 failed · ETA 0s');
  });

  it('a later word moves a step between done and failed; skipped steps leave the count; tasks that do not wait count accepted as done', () => {
    const phase = new RunPhase(4, new Set([0]));
    phase.onEvent(ev('result', 'a', 'accepted'), 0);
    phase.onEvent(ev('update', 'a', 'succeeded'), 1000);
    phase.onEvent(ev('update', 'a', 'failed'), 1100); // its health check after the operation
    phase.onEvent(ev('result', 'b', 'skipped'), 1200);
    phase.onEvent(ev('result', 'c', 'accepted', 1), 1300);
    expect([phase.sent, phase.total, phase.done, phase.failed, phase.running]).toEqual([2, 3, 1, 1, 0]);
  });

  it('once the window closed: what was not sent, and the wait for the operations already accepted', () => {
    const phase = new RunPhase(10, new Set([0]));
    phase.onEvent(ev('result', 'a', 'accepted'), 0);
    phase.onEvent(ev('result', 'b', 'accepted'), 500);
    phase.onEvent(ev('update', 'a', 'succeeded'), 4000);
    expect(phase.line(5000, 1000, true)).toBe('window closed, 8 not sent · waiting for 1 operation · 1 done · 0 failed · next poll in 1s · ETA 1s');
  });
});
