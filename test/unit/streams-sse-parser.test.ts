import { describe, expect, it } from 'vitest';
import { SseParser, type SseMessage } from '../../connectors/relay/index.js';

function parse(chunks: readonly string[], lastEventId = ''): { messages: SseMessage[]; parser: SseParser } {
  const messages: SseMessage[] = [];
  const parser = new SseParser((m) => messages.push(m), lastEventId);
  for (const chunk of chunks) parser.feed(chunk);
  return { messages, parser };
}

describe('the event-stream parser of the relay', () => {
  it('reads the frames the gateway writes: an id alone, events, heartbeats', () => {
    const { messages, parser } = parse([
      'id: 2-5.7-9\n\n',
      ': ping\n\n',
      'id: 2-6.7-9\nevent: message.received\ndata: {"event_id":"evt_1","x":"a: b"}\n\n',
      ': ping\n\nid: 2-8.7-9\n\n',
    ]);
    expect(messages).toEqual([{ type: 'message.received', data: '{"event_id":"evt_1","x":"a: b"}', lastEventId: '2-6.7-9' }]);
    expect(parser.lastEventId).toBe('2-8.7-9');
  });

  it('sets the last id from a block without data, without dispatching', () => {
    const { messages, parser } = parse(['id: 3-1\n\n']);
    expect(messages).toEqual([]);
    expect(parser.lastEventId).toBe('3-1');
  });

  it('does not take an id whose block has not ended', () => {
    const { parser } = parse(['id: 3-1\n\n', 'id: 3-2\nevent: x\ndata: y\n']);
    expect(parser.lastEventId).toBe('3-1');
  });

  it('accepts frames cut anywhere, and LF, CRLF or CR line ends', () => {
    const text = 'id: 1-1\r\nevent: a\r\ndata: {"k":"é🎉"}\r\n\r\nid: 1-2\revent: b\rdata: two\rdata: lines\r\rid: 1-3\nevent: c\ndata:no space\n\n';
    const whole = parse([text]).messages;
    expect(whole).toEqual([
      { type: 'a', data: '{"k":"é🎉"}', lastEventId: '1-1' },
      { type: 'b', data: 'two\nlines', lastEventId: '1-2' },
      { type: 'c', data: 'no space', lastEventId: '1-3' },
    ]);
    for (let cut = 1; cut < text.length; cut++) {
      expect(parse([text.slice(0, cut), text.slice(cut)]).messages, `cut at ${cut}`).toEqual(whole);
    }
    expect(parse([...text]).messages).toEqual(whole);
  });

  it('keeps the id across events and connections, ignores a BOM, unknown fields and ids with NUL', () => {
    const { messages, parser } = parse(['\uFEFFretry: 10\nfoo: bar\ndata: first\n\n', 'id: a\u0000b\ndata: second\n\n'], '9-9');
    expect(messages).toEqual([
      { type: 'message', data: 'first', lastEventId: '9-9' },
      { type: 'message', data: 'second', lastEventId: '9-9' },
    ]);
    parser.feed('id: 9-10\ndata: half');
    parser.reset();
    parser.feed('\n\n');
    expect(parser.lastEventId).toBe('9-9');
  });
});
