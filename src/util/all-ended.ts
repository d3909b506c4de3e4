/**
 * Waits for every one of `work` to end, then gives their values, or throws the first failure. Unlike
 * Promise.all, nothing is left running when the caller goes on to let go of what the work uses (a
 * journal, a runtime, a lock): a failure of one is seen only once the others have ended.
 */
export async function allEnded<T>(work: readonly Promise<T>[]): Promise<T[]> {
  const ended = await Promise.allSettled(work);
  const failed = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
  if (failed) throw failed.reason instanceof Error ? failed.reason : new Error('a part of the work failed', { cause: failed.reason });
  return ended.map((e) => (e as PromiseFulfilledResult<T>).value);
}
