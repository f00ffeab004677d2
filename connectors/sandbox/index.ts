export { SandboxNetwork } from './network.js';
export { PendingReceipts } from './receipts.js';
export { SandboxBehaviours } from './behaviours.js';
export { sandboxChecks } from './directory.js';
export type { Delivered, SandboxView, SessionDeps as SandboxDeps } from './session.js';
