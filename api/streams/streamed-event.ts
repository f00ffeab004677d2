import { envelopeBody } from '../../events/envelope.js';
import type { PublicEvent } from '../../schemas/records.js';

/** One record of `gw.events` as streams hold it: where it sits in the log, and its body rendered once for every client. */
export class StreamedEvent {
  private rendered: string | undefined;

  constructor(
    readonly partition: number,
    readonly offset: number,
    readonly event: PublicEvent,
  ) {}

  /** The envelope of spec 2.5 as streamed: exactly what a webhook of the account would be posted. */
  get body(): string {
    this.rendered ??= envelopeBody(this.event, 'account');
    return this.rendered;
  }
}
