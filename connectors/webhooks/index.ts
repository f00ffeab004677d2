export { startDispatcher, type RunningDispatcher } from './dispatcher.js';
export { createWebhookPoster, type WebhookPoster, type PostResult } from './post.js';
export { deliveryIdOf } from './tasks.js';
export { retryTiers } from './schedule.js';
