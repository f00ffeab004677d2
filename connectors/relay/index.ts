export { listenCommand, listenUsage, relayOptions } from './command.js';
export { runRelay, type RelayOptions, type RelayOutput } from './relay.js';
export { SseParser, type SseMessage } from './sse-parser.js';
