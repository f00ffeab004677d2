export { BaileysNetwork, type BaileysNetworkDeps } from './network.js';
export { BaileysProtocol, type BaileysProtocolDeps } from './protocol.js';
export type { SocketOptions } from './socket-options.js';
export { leasePool } from './lease.js';
export { webVersion } from './web-version.js';
