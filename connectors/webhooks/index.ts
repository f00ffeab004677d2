export { startDispatcher, type DispatcherDeps, type RunningDispatcher, type WebhookOptions } from './dispatcher.js';
export { createWebhookPoster, type WebhookPoster, type PostResult } from './post.js';
export { deliveryIdOf } from './tasks.js';
export { deliveryMetrics, type DeliveryMetrics } from './metrics.js';
export { PARTNER_RETRY_DELAYS_MS, retrySchedule, retrySchedules, tiersOf, type RetrySchedule, type RetrySchedules } from './schedule.js';
