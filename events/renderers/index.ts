export { scheduledEvent, type EventFields } from './event.js';
export { inboundEvent, statusEvent, type MediaUrl } from './messages.js';
export { instanceEvents, instanceStatusEventId, pairingEvent } from './instances.js';
export { groupEvent } from './groups.js';
export { advisoryEvents, type AdvisoryInput } from './advisories.js';
export { thresholdEvent, thresholdEventId, type Threshold } from './usage.js';
export { KEYWORD_SOURCE, optedOutEvent } from './opt-out.js';
export { connectionEvents } from './connections.js';
export { callEvents } from './calls.js';
