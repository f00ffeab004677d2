export { audienceProjection } from './projection.js';
export {
  contactGroup,
  contactGroups,
  groupMembers,
  listedPhone,
  listedPhones,
  memberIds,
  recipientStanding,
  recipientStandings,
  type ContactGroupRow,
  type ListedPhoneRow,
  type MemberRow,
  type PhoneList,
  type RecipientStanding,
} from './queries.js';
