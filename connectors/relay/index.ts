export { listenCommand, relayOptions } from './command.js';
export { listenUsage } from './usage.js';
export { runRelay, type RelayOptions, type RelayOutput } from './relay.js';
export { SseParser, type SseMessage } from './sse-parser.js';
