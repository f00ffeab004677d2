/** One dispatched server-sent event. */
export interface SseMessage {
  /** The `event:` field, `message` when absent. */
  readonly type: string;
  /** The `data:` lines joined by newlines, exactly as sent. */
  readonly data: string;
  readonly lastEventId: string;
}

/**
 * The event-stream parser of the HTML standard (lines end in LF, CRLF or CR; `:` starts a
 * comment; a blank line dispatches). Like EventSource it keeps the last event id across events,
 * and an `id:` in a block without data still sets it: the gateway's streams start with such a
 * block so that a client that has received nothing yet still resumes from the right place.
 */
export class SseParser {
  private buffer = '';
  private started = false;
  private data = '';
  private type = '';
  private idBuffer: string;
  private lastId: string;

  constructor(
    private readonly onEvent: (message: SseMessage) => void,
    lastEventId = '',
  ) {
    this.lastId = lastEventId;
    this.idBuffer = lastEventId;
  }

  /** The id a reconnect sends as `Last-Event-ID`. */
  get lastEventId(): string {
    return this.lastId;
  }

  feed(chunk: string): void {
    this.buffer += chunk;
    if (!this.started && this.buffer.length > 0) {
      this.started = true;
      if (this.buffer.startsWith('\uFEFF')) this.buffer = this.buffer.slice(1);
    }
    let start = 0;
    for (;;) {
      const lf = this.buffer.indexOf('\n', start);
      const cr = this.buffer.indexOf('\r', start);
      let end: number;
      let next: number;
      if (lf !== -1 && (cr === -1 || lf < cr)) {
        end = lf;
        next = lf + 1;
      } else if (cr !== -1) {
        // A CR last in the chunk may be the first half of a CRLF: wait for the next chunk.
        if (cr === this.buffer.length - 1) break;
        end = cr;
        next = this.buffer[cr + 1] === '\n' ? cr + 2 : cr + 1;
      } else {
        break;
      }
      this.line(this.buffer.slice(start, end));
      start = next;
    }
    this.buffer = this.buffer.slice(start);
  }

  /** A new connection: what was half received is dropped; the last event id stays. */
  reset(): void {
    this.buffer = '';
    this.started = false;
    this.data = '';
    this.type = '';
    this.idBuffer = this.lastId;
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.type = value;
        return;
      case 'data':
        this.data += `${value}\n`;
        return;
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value;
        return;
      default:
        // `retry` and unknown fields: nothing for the relay to do.
        return;
    }
  }

  private dispatch(): void {
    this.lastId = this.idBuffer;
    const { data, type } = this;
    this.data = '';
    this.type = '';
    if (data === '') return;
    this.onEvent({ type: type === '' ? 'message' : type, data: data.slice(0, -1), lastEventId: this.lastId });
  }
}
