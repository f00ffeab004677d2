import { request } from 'undici';

export interface StreamedFrame {
  readonly event: string;
  readonly data: Record<string, unknown>;
  /** The `id:` line: a cursor to resume after. */
  readonly id: string | undefined;
}

/** Server-sent events read as they come into `events`, until `close()`. */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<{ status: number; events: StreamedFrame[]; close(): void }> {
  const controller = new AbortController();
  const response = await request(url, { headers, signal: controller.signal });
  const events: StreamedFrame[] = [];
  let buffer = '';
  void (async () => {
    try {
      for await (const chunk of response.body) {
        buffer += (chunk as Buffer).toString('utf8');
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          const id = /^id: (.*)$/m.exec(block)?.[1];
          if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) as Record<string, unknown>, id });
        }
      }
    } catch {
      // closed by the test
    }
  })();
  return { status: response.statusCode, events, close: () => controller.abort() };
}
