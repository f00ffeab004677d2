export { SandboxNetwork } from './network.js';
export { PendingReceipts } from './receipts.js';
export { sandboxDirectory } from './directory.js';
export type { Delivered, SandboxView, SessionDeps as SandboxDeps } from './session.js';
