import type { ButtonsContent, ListContent, OtpContent } from '../../schemas/records.js';
import type { OtpOpener } from './connector.js';

/** Buttons for non-official senders (spec 4.2): the body, then one numbered line per button. */
export function buttonsAsText(content: ButtonsContent): string {
  return [content.body, '', ...content.buttons.map((button, i) => `${i + 1}. ${button.title}`)].join('\n');
}

/** A list for non-official senders: the body, then each section's title and its rows, numbered across sections. */
export function listAsText(content: ListContent): string {
  const lines = [content.body];
  let n = 0;
  for (const section of content.sections) {
    lines.push('');
    if (section.title) lines.push(section.title);
    for (const row of section.rows) {
      n += 1;
      lines.push(`${n}. ${row.title}${row.description ? ` - ${row.description}` : ''}`);
    }
  }
  return lines.join('\n');
}

/** An OTP is two messages: the context text, then a bubble holding only the code (spec 4.2). */
export function otpBubbles(content: OtpContent, opener: OtpOpener): readonly [context: string, code: string] {
  return [content.body, opener.open(content.code_ciphertext)];
}
