import { describe, expect, it } from 'vitest';
import { newId } from '../../schemas/ids.js';

describe('newId', () => {
  it('gives ids of a prefix and 16 base32 characters, none twice, across refills of its random pool', () => {
    // 256 ids take one 4 KB draw: 1,000 cross three refills.
    const ids = Array.from({ length: 1_000 }, () => newId('msg'));
    for (const id of ids) expect(id).toMatch(/^msg_[a-z2-7]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Every position takes every character: the pool is drawn from, not reused.
    for (let position = 4; position < 20; position++) expect(new Set(ids.map((id) => id[position])).size).toBe(32);
  });
});
