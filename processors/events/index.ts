export { eventsProjection, type EventsProjectionDeps } from './projection.js';
export { checkedAdvisory, publishAdvisory, type PublishedAdvisory } from './advisories.js';
