import { describe, expect, it } from 'vitest';
import { planImport, rowPhone } from '../../api/contacts/import.js';
import { findUnstorableText, textProblem } from '../../api/storable-text.js';

describe('the storable text rule', () => {
  it('refuses NUL and lone surrogates, and takes every well-formed string, emoji included', () => {
    expect(textProblem('a\u0000b')).toBe('contains a NUL character');
    expect(textProblem('\u0000')).toBe('contains a NUL character');
    expect(textProblem('x\ud800')).toBe('contains a lone UTF-16 surrogate');
    expect(textProblem('\udc00x')).toBe('contains a lone UTF-16 surrogate');
    expect(textProblem('\udc00\ud800')).toBe('contains a lone UTF-16 surrogate'); // reversed pair
    for (const fine of ['', 'plain', 'Zoë 👋🏽 日本 — ok', '\u{1F600}', 'tab\tand\nnewline', '\uFFFD']) {
      expect(textProblem(fine)).toBeUndefined();
    }
  });

  it('names the first field that breaks it, keys included, and skips what the route checks itself', () => {
    const body = { to: '+5511999990001', media: { mimetype: 'image/png\u0000', caption: 'ok' }, tags: ['a', 'b\ud800'] };
    expect(findUnstorableText(body, 'body')).toEqual({ field: 'body/media/mimetype', problem: 'contains a NUL character' });
    expect(findUnstorableText({ id: 'abc\u0000def' }, 'params')).toEqual({ field: 'params/id', problem: 'contains a NUL character' });
    expect(findUnstorableText({ ['k\u0000']: 1 }, 'body')).toEqual({ field: 'body', problem: 'contains a NUL character' });
    expect(findUnstorableText({ rows: [{ name: '\u0000' }], ok: 'x' }, 'body', new Set(['body/rows']))).toBeUndefined();
    expect(findUnstorableText({ a: [1, null, true, { b: 'emoji 🌸' }] }, 'body')).toBeUndefined();
    expect(findUnstorableText(undefined, 'body')).toBeUndefined();
  });

  it('walks any depth of nesting without overflowing the stack', () => {
    let deep: unknown = ['\u0000'];
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { a: deep };
    const found = findUnstorableText(deep, 'body');
    expect(found?.problem).toBe('contains a NUL character');
    expect(found?.field.split('/')).toHaveLength(100_002);
  });

  it('makes an import row with unstorable text invalid, with its reason, and creates nothing for it', () => {
    const rows = [
      { phone: '+5511900000001', name: 'Ana\u0000' },
      { phone: '+5511900000002', tags: ['ok', '\ud83d'] },
      { phone: '+55119000\u00000003' },
      { phone: '+5511900000004', name: 'Zoë 🌸' },
    ];
    const plan = planImport('acc_1', rows, rows.map((row) => rowPhone(row, null)), new Map());
    expect(plan.invalidRows).toEqual([
      { index: 0, phone: '+5511900000001', reason: 'invalid_text' },
      { index: 1, phone: '+5511900000002', reason: 'invalid_text' },
      { index: 2, phone: '+55119000\uFFFD0003', reason: 'invalid_text' },
    ]);
    expect(plan.created).toBe(1);
    expect(plan.upserts.map((c) => c.name)).toEqual(['Zoë 🌸']);
  });
});
