export { analyticsTables } from './tables.js';
export { startAnalyticsWriters } from './writer.js';
export { readOnlySql, RefusedSql, SQL_DEFAULT_ROWS, SQL_ROW_LIMIT, SQL_TIMEOUT_SECONDS, type SqlResult } from './sql.js';
