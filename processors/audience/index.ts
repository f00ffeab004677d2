export { audienceProjection } from './projection.js';
export {
  contactGroup,
  contactGroups,
  groupMembers,
  listedPhone,
  listedPhones,
  memberIds,
  recipientStandings,
  standingReader,
  standingRefusal,
  type ContactGroupRow,
  type ListedPhoneRow,
  type MemberRow,
  type PhoneList,
  type RecipientStanding,
  type StandingKind,
} from './queries.js';
