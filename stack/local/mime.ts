/** Just enough MIME to read test mail: headers, encoded words, transfer encodings, multipart. */

interface Part {
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

export interface ParsedMail {
  header(name: string): string;
  /** The text/plain body, else the first other text body (HTML), else ''. */
  readonly text: string;
}

export function parseMail(raw: string): ParsedMail {
  const root = split(raw.replace(/\r\n/g, '\n'));
  return {
    header: (name) => root.headers.get(name.toLowerCase()) ?? '',
    text: findText(root, 'text/plain') ?? findText(root, 'text/') ?? '',
  };
}

function split(source: string): Part {
  const end = source.indexOf('\n\n');
  const head = end < 0 ? source : source.slice(0, end);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\n(?=[ \t])/g, '').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  return { headers, body: end < 0 ? '' : source.slice(end + 2) };
}

function findText(part: Part, type: string): string | undefined {
  const contentType = part.headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (/^multipart\//i.test(contentType) && boundary) {
    // Each part follows a delimiter line; the closing delimiter ends with `--`.
    for (const chunk of `\n${part.body}`.split(`\n--${boundary}`).slice(1)) {
      if (chunk.startsWith('--')) break;
      const text = findText(split(chunk.replace(/^[ \t]*\n/, '')), type);
      if (text !== undefined) return text;
    }
    return undefined;
  }
  return contentType.toLowerCase().startsWith(type) ? decodeBody(part, contentType) : undefined;
}

function decodeBody(part: Part, contentType: string): string {
  const charset = /charset="?([^";\s]+)"?/i.exec(contentType)?.[1] ?? 'utf-8';
  switch ((part.headers.get('content-transfer-encoding') ?? '7bit').toLowerCase()) {
    case 'base64':
      return decode(Buffer.from(part.body, 'base64'), charset);
    case 'quoted-printable':
      return decode(quotedPrintable(part.body.replace(/=\n/g, '')), charset);
    default:
      return part.body;
  }
}

/** RFC 2047 words such as `=?UTF-8?Q?Ol=C3=A1?=`; the blanks between two adjacent words go. */
function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_word, charset: string, encoding: string, text: string) =>
      decode(encoding.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : quotedPrintable(text.replace(/_/g, ' ')), charset),
    );
}

function quotedPrintable(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(text.charCodeAt(i));
    }
  }
  return Buffer.from(bytes);
}

function decode(bytes: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return bytes.toString('utf8');
  }
}
