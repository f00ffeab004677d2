/**
 * Waits for every one of `work` (each part of a process stopping at once), then fails with the
 * first failure, if any: a part that fails does not leave the others running unawaited.
 */
export async function allSettled(work: readonly Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}
