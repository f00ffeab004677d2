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
  standingRefusal,
  type ContactGroupRow,
  type ListedPhoneRow,
  type MemberRow,
  type PhoneList,
  type RecipientStanding,
  type StandingKind,
} from './queries.js';
