import { readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encryptedStream, proto, type WAMessage, type WASocket } from '@whiskeysockets/baileys';

/**
 * The network's media servers, played locally: each path serves the encrypted bytes of one media
 * after its own delay (or never), and records when each download started and ended.
 */
export class SlowMediaServer {
  readonly served: { readonly path: string; readonly startedAt: number; endedAt?: number }[] = [];
  private readonly files = new Map<string, { readonly bytes: Buffer; readonly delayMs: number }>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<SlowMediaServer> {
    const server = createServer((req, res) => media.answer(req.url ?? '/', res));
    const media = new SlowMediaServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return media;
  }

  /** Serves `bytes` at `path` after `delayMs` (Infinity: never answers). */
  serve(path: string, bytes: Buffer, delayMs: number): string {
    this.files.set(path, { bytes, delayMs });
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(path: string, res: ServerResponse): void {
    const file = this.files.get(path);
    const record: { path: string; startedAt: number; endedAt?: number } = { path, startedAt: performance.now() };
    this.served.push(record);
    if (file === undefined) {
      res.writeHead(404).end();
      return;
    }
    if (file.delayMs === Infinity) return;
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(file.bytes);
      record.endedAt = performance.now();
    }, file.delayMs);
  }
}

const CUSTOMER = '5511966665555@s.whatsapp.net';

/** A customer's text, as Baileys hands it over in `messages.upsert`. */
export function textMessage(id: string, text: string, at = 1_764_000_000): WAMessage {
  return proto.WebMessageInfo.fromObject({ key: { remoteJid: CUSTOMER, fromMe: false, id }, messageTimestamp: at, message: { conversation: text } }) as WAMessage;
}

/**
 * A customer's image whose media the network's media server (`media`) gives after `delayMs`:
 * encrypted with Baileys' own `encryptedStream`, as a phone uploads it.
 */
export async function imageMessage(media: SlowMediaServer, id: string, plain: Buffer, delayMs: number, at = 1_764_000_000): Promise<WAMessage> {
  const encrypted = await encryptedStream(plain, 'image');
  const bytes = await readFile(encrypted.encFilePath);
  await rm(encrypted.encFilePath, { force: true });
  const url = media.serve(`/media/${id}`, bytes, delayMs);
  return proto.WebMessageInfo.fromObject({
    key: { remoteJid: CUSTOMER, fromMe: false, id },
    messageTimestamp: at,
    message: {
      imageMessage: {
        url,
        mimetype: 'image/jpeg',
        mediaKey: encrypted.mediaKey,
        fileSha256: encrypted.fileSha256,
        fileEncSha256: encrypted.fileEncSha256,
        fileLength: encrypted.fileLength,
        caption: id,
      },
    },
  }) as WAMessage;
}

/**
 * What a logged-in socket does once the network has logged it in and delivered what was pending
 * (`CB:ib,,offline`): it reports the connection open and ends its initial event buffer. From then
 * on a message handed over reaches the session at once.
 */
export function loggedIn(socket: WASocket): void {
  socket.ev.emit('connection.update', { connection: 'open' });
  socket.ev.flush();
}
