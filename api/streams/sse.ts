import type { ServerResponse } from 'node:http';
import type { EventSink } from './hub.js';
import type { StreamedEvent } from './streamed-event.js';

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
} as const;

/** An event: its name is the event type, its data the one-line JSON envelope, its id the cursor after it. */
function eventFrame(cursor: string, type: string, data: string): string {
  return `id: ${cursor}\nevent: ${type}\ndata: ${data}\n\n`;
}

/** Sets the client's last event id without dispatching an event (no data). */
function idFrame(cursor: string): string {
  return `id: ${cursor}\n\n`;
}

const PING_FRAME = ': ping\n\n';

export interface SseLimits {
  /** Bytes written but not yet taken by the client; past this the client is too slow and is let go. */
  readonly maxBufferedBytes: number;
  /** How long a catch-up waits for the client to read before letting it go. */
  readonly drainTimeoutMs: number;
}

/** The SSE response of one client, as the hub's sink. Writes nothing once the response has ended. */
export class SseResponse implements EventSink {
  private lastId: string | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly limits: SseLimits,
  ) {}

  get ended(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }

  open(cursor: string): void {
    this.res.writeHead(200, SSE_HEADERS);
    this.write(idFrame(cursor));
    this.lastId = cursor;
  }

  send(entry: StreamedEvent, cursor: string): boolean {
    this.lastId = cursor;
    return this.write(eventFrame(cursor, entry.event.event_type, entry.body));
  }

  /** A heartbeat; when the client's place moved on without an event of its own, the new place too. */
  ping(cursor: string): void {
    this.write(PING_FRAME + (cursor === this.lastId ? '' : idFrame(cursor)));
    this.lastId = cursor;
  }

  drained(): Promise<void> {
    if (this.ended || this.res.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        this.drop();
      }, this.limits.drainTimeoutMs);
      this.res.once('drain', done);
      this.res.once('close', done);
    });
  }

  /** Ends the response; a client that does not take the rest in time is cut off. */
  close(): void {
    if (this.ended) return;
    this.res.end();
    if (this.res.writableFinished) return;
    const timer = setTimeout(() => this.drop(), this.limits.drainTimeoutMs);
    this.res.once('close', () => clearTimeout(timer));
  }

  /** Cuts off a client that cannot keep up: its unread bytes are not waited for. */
  private drop(): void {
    this.res.destroy();
  }

  private write(frame: string): boolean {
    if (this.ended) return true;
    const ok = this.res.write(frame);
    if (this.res.writableLength > this.limits.maxBufferedBytes) {
      this.drop();
      return true;
    }
    return ok;
  }
}
