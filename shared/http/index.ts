export { createHttpFetcher, type HttpFetcher, type HttpFetcherOptions, type FetchedResponse } from './fetch.js';
export { guardedConnector, type GuardOptions, type Resolver } from './guard.js';
export { OutboundHttpError } from './errors.js';
export { retriableStatus, OUTBOUND_FAILURES, type OutboundFailureKind } from './retriable.js';
export { isHttpUrl } from './url.js';
