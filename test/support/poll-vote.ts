import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * A poll vote encrypted the way a voter's phone does it, written from the protocol rather than
 * with Baileys' helpers so the round trip checks our decryption against an independent sender:
 * the key is HMAC-SHA256 of (poll id, creator jid, voter jid, "Poll Vote", 0x01) under a key made
 * from the poll's secret; the payload is AES-256-GCM of the PollVoteMessage (option hashes), with
 * "<poll id>\0<voter jid>" as additional data and the tag after the ciphertext.
 */
export function encryptVote(input: { secret: Uint8Array; pollId: string; creatorJid: string; voterJid: string; chosen: readonly string[] }): { encPayload: Buffer; encIv: Buffer } {
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(input.secret).digest();
  const sign = Buffer.concat([Buffer.from(input.pollId), Buffer.from(input.creatorJid), Buffer.from(input.voterJid), Buffer.from('Poll Vote'), Buffer.from([1])]);
  const key = createHmac('sha256', key0).update(sign).digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${input.pollId}\u0000${input.voterJid}`));
  const plain = pollVoteMessage(input.chosen.map((name) => createHash('sha256').update(name, 'utf8').digest()));
  return { encPayload: Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]), encIv: iv };
}

/** `PollVoteMessage { repeated bytes selectedOptions = 1; }` in protobuf wire format. */
function pollVoteMessage(hashes: readonly Buffer[]): Buffer {
  return Buffer.concat(hashes.map((hash) => Buffer.concat([Buffer.from([0x0a, hash.length]), hash])));
}
