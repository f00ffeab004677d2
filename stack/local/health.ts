/** A readable reason from anything thrown, including fetch's `cause` (ECONNREFUSED and the like). */
export function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${(error.cause as NodeJS.ErrnoException).code ?? error.cause.message})` : '';
  return `${error.message}${cause}`;
}

/** Resolves when `url` answers 2xx within two seconds. */
export async function httpOk(url: string): Promise<void> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
}
