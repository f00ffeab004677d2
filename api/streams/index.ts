export { StreamHub, type EventSink, type StreamRequest, type Subscription, type StreamHubOptions } from './hub.js';
export { streamRoutes, type StreamRouteOptions } from './routes.js';
export { formatCursor, parseCursor, type Cursor } from './cursor.js';
export { lastEventIdOf, MAX_CURSOR_LENGTH, serveStream, type ServedStream } from './serve.js';
