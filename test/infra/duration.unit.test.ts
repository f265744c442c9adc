import { expect, it } from 'vitest';
import { parseDuration } from '../../lib/duration.js';

it('reads each unit', () => {
  expect(['500ms', '10s', '30m', '2h', ' 10s '].map(parseDuration)).toEqual([
    500, 10_000, 1_800_000, 7_200_000, 10_000,
  ]);
});

it.each(['10', '1.5h', '10 s', '-5m', '5d', ''])('rejects %j, saying what it expects', (text) => {
  expect(() => parseDuration(text)).toThrow(
    `"${text}" is not a duration; use a whole number followed by ms, s, m or h (e.g. 500ms, 10s, 30m, 2h)`,
  );
});

it('rejects a zero duration', () => {
  expect(() => parseDuration('0s')).toThrow('"0s" must be longer than zero');
});
