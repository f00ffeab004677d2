export { contactsProjection, type ContactsProjectionOptions } from './projection.js';
export { optedOut, contactById, contactsByPhone, listContacts, knownContactIds, tagCounts, type ContactRow, type ContactFilter } from './queries.js';
export { contactId } from '../../schemas/contact-ids.js';
export { isOptOutKeyword } from './keywords.js';
export { seedContactStates } from './changelog.js';
