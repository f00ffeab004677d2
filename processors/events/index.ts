export { eventsProjection, type EventsProjectionDeps } from './projection.js';
export { inboundEvent, statusEvent, type MediaUrl } from './messages.js';
export { instanceEvents, instanceStatusEventId, pairingEvent } from './instances.js';
export { groupEvent } from './groups.js';
export { advisoryEvents, checkedAdvisory, publishAdvisory, type AdvisoryInput, type PublishedAdvisory } from './advisories.js';
export { eventKey, scheduledEvent, type EventFields } from './event.js';
