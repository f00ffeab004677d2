import { Type } from '@sinclair/typebox';

const Day = (description: string) => Type.String({ format: 'date', description });
const Instant = (description: string) => Type.String({ format: 'date-time', description });

export const UsageQuery = Type.Object({
  from: Type.Optional(Day('First day counted (UTC), inclusive; default: the first day of the current month')),
  to: Type.Optional(Day('Last day counted (UTC), inclusive; default: today')),
  granularity: Type.Optional(Type.Union([Type.Literal('day'), Type.Literal('month')], { description: 'Length of each period; default: day' })),
  project_id: Type.Optional(
    Type.String({ maxLength: 100, description: 'Only this project; omitted or `all`: the whole account (a partner-issued key always sees its own project only)' }),
  ),
  instance_id: Type.Optional(
    Type.String({ maxLength: 100, pattern: '^inst_[A-Za-z0-9_-]+$', description: 'Only what this number counted (a removed number too; one the account never had counts nothing)' }),
  ),
});

export const UsageOut = Type.Object({
  from: Day('First day counted'),
  to: Day('Last day counted'),
  granularity: Type.Union([Type.Literal('day'), Type.Literal('month')]),
  project_id: Type.Union([Type.String(), Type.Null()], { description: 'Project counted; null for the whole account' }),
  instance_id: Type.Union([Type.String(), Type.Null()], { description: 'Number counted; null for every number' }),
  data: Type.Array(
    Type.Object({
      period_start: Day('First day of the period (a month starts on its first day, even when `from` is later)'),
      messages: Type.Integer({ description: 'Accepted sends; an OTP counts one' }),
      media_bytes: Type.Integer({ description: 'Net bytes of media stored in the period (removals subtract)' }),
    }),
    { description: 'Every period from `from` to `to`, oldest first, zero where nothing was counted' },
  ),
});

export const EntitlementsOut = Type.Object({
  plan: Type.String({ description: 'free, pro or scale' }),
  limits: Type.Object({
    numbers: Type.Integer({ description: 'Numbers the account may have' }),
    messages_per_month: Type.Integer({ description: 'Sends included per calendar month (UTC)' }),
    media_storage_bytes: Type.Integer({ description: 'Stored media included' }),
    media_storage_per_addon_bytes: Type.Integer({ description: 'Stored media each add-on adds; 0 where the plan takes none' }),
    media_storage_allowance_bytes: Type.Integer({ description: "Stored media the account may hold: the plan's plus what its add-ons add (what media sends and usage.threshold are held against)" }),
    rate_limit: Type.Object({
      requests_per_second: Type.Integer({ description: 'Token bucket refill per API key' }),
      burst: Type.Integer({ description: 'Most requests at once' }),
    }),
  }),
  usage: Type.Object({
    period_start: Instant('Start of the current period (calendar month, UTC)'),
    period_end: Instant('End of the current period, exclusive'),
    messages: Type.Integer({ description: 'Sends in the current period' }),
    media_storage_bytes: Type.Integer({ description: 'Media stored now' }),
  }),
});

const MaybeInstant = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const SubscriptionOut = Type.Object({
  plan: Type.String({ description: 'free, pro or scale' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('lapsed'), Type.Literal('canceled')], {
    description: 'active; lapsed (a renewal was not paid) or canceled while the plan its paid subscription gave is gone',
  }),
  current_period_start: Instant('Start of the current period (calendar month, UTC)'),
  current_period_end: Instant('End of the current period, exclusive'),
  payment: Type.Union(
    [
      Type.Object({
        attempt_id: Type.String({ description: 'The paid attempt that is the subscription' }),
        provider: Type.String({ description: 'sandbox or stripe' }),
        method: Type.String({ description: 'card or pix' }),
        status: Type.String({ description: 'paid, lapsed or canceled' }),
        currency: Type.String(),
        amount: Type.Integer({ description: 'Price of a period, in the currency’s minor unit' }),
        period_end: MaybeInstant('End of the period paid'),
        started_at: Instant('When it was first paid'),
        renewals: Type.Integer({ description: 'Renewals paid since' }),
        renewal_due_at: MaybeInstant('When a renewal’s pay link was e-mailed and not paid since'),
      }),
      Type.Null(),
    ],
    { description: 'The subscription to Pro as its payments made it (gw.payments); null when the account never paid' },
  ),
  latest_attempt: Type.Union(
    [Type.Object({ attempt_id: Type.String(), method: Type.String(), status: Type.String({ description: 'pending, paid, failed, canceled or lapsed' }), updated_at: Instant('Its latest change') }), Type.Null()],
    { description: 'The latest payment attempt of the account; null when it made none' },
  ),
});
