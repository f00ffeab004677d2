import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../api/json-depth.js';

const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('the nesting of a JSON text', () => {
  it('counts arrays and objects together, up to the limit and not past it', () => {
    expect(nestsDeeperThan(arrays(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(arrays(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(objects(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 3)).toBe(true);
    // Siblings do not add up: depth is how far in, not how many.
    expect(nestsDeeperThan(`[${Array.from({ length: 1000 }, () => '[[1]]').join(',')}]`, 3)).toBe(false);
  });

  it('reads 100,000 levels without recursing, arrays and objects alike', () => {
    expect(nestsDeeperThan(arrays(100_000), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(objects(100_000), MAX_JSON_DEPTH)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(JSON.stringify({ body: '['.repeat(1000) }), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ body: 'say \\"[[[[\\" \\\\', k: '{{{{' }), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ a: 'x\\\\' }) + '[[[', 1)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ ['[[[[']: { '"': ['\\'] } }), 3)).toBe(false);
  });

  it('leaves malformed text to the parser', () => {
    expect(nestsDeeperThan('{"to": "never ends', 1)).toBe(false);
    expect(nestsDeeperThan(']]]]', 1)).toBe(false);
    expect(nestsDeeperThan('', 1)).toBe(false);
  });
});
