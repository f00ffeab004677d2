/**
 * The context text of an OTP send as the transcript keeps it. The API keeps the code out of the
 * text it generates, but a caller's own body may repeat it: any run of letters and digits that has
 * the code's length and ends in its visible digits is replaced by the mask (`••••12`).
 */
export function maskedOtpBody(body: string, codeMasked: string): string {
  const visible = /[0-9A-Za-z]*$/.exec(codeMasked)?.[0] ?? '';
  const hidden = codeMasked.length - visible.length;
  if (hidden === 0 || visible === '') return body;
  const code = new RegExp(`(?<![0-9A-Za-z])[0-9A-Za-z]{${hidden}}${visible}(?![0-9A-Za-z])`, 'g');
  return body.replace(code, codeMasked);
}
