import { Type } from '@sinclair/typebox';
import { anyOf } from '../../schemas/phones.js';

/** The number a route acts through: these routes act on one number's own network state. */
export const InstanceIdField = Type.String({ minLength: 1, maxLength: 100, description: 'The number (instance) to act through' });

/** A chat: an E.164 phone, or a jid (a phone, a `@lid` identity or a `@g.us` group). */
export const ChatRef = Type.String({
  pattern: anyOf('e164', 'phoneJid', 'lid', 'groupJid'),
  description: 'E.164 phone (+5511999998888) or a jid',
});

/** Answer of an action the network carried out. */
export const Done = Type.Object({ instance_id: Type.String(), done: Type.Literal(true) });
