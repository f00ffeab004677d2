export { conversationsProjection } from './projection.js';
export { seedMessageStates } from './changelog.js';
export { lastInstanceFor, lastInstanceReader, lastInstancesFor, listConversations, listMessages, conversationExists, type ConversationRow, type StoredMessage } from './queries.js';
