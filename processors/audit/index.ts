export { auditProjection } from './projection.js';
export { auditEntries, type AuditRow } from './queries.js';
