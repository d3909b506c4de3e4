/** A rate as playbooks and flags write it; shared by the client's budget, `validate` and the simulator. */
/** `120/min`, `2/s`, `50/1s`, `500/10s` → { limit, periodMs }. */
export function parseRate(text: string): { limit: number; periodMs: number } {
  const m = /^\s*(\d+)\s*\/\s*(\d*)\s*(ms|s|sec|second|m|min|minute|h|hour)\s*$/.exec(text);
  if (!m || Number(m[1]) < 1) throw new Error(`rate ${JSON.stringify(text)} is not of the form N/s, N/min or N/10s`);
  const unit = { ms: 1, s: 1000, sec: 1000, second: 1000, m: 60_000, min: 60_000, minute: 60_000, h: 3_600_000, hour: 3_600_000 }[m[3]!]!;
  const count = m[2] ? Number(m[2]) : 1;
  if (count < 1) throw new Error(`rate ${JSON.stringify(text)} has a zero period`);
  return { limit: Number(m[1]), periodMs: count * unit };
}
