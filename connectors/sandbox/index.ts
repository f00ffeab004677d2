export { SandboxNetwork } from './network.js';
export type { Delivered, SandboxView, SessionDeps as SandboxDeps } from './session.js';
