import { describe, expect, it } from 'vitest';
import { ORDER_SHAPES, hasShape, type OrderShape } from '../../domain/messages.js';

describe('order shapes', () => {
  it('a shape has what it and every older shape introduced, and nothing newer', () => {
    expect(ORDER_SHAPES).toEqual(['lean', 'local-steps']);
    expect(hasShape(undefined, 'lean')).toBe(false);
    expect(hasShape('lean', 'lean')).toBe(true);
    expect(hasShape('lean', 'local-steps')).toBe(false);
    expect(hasShape('local-steps', 'lean')).toBe(true);
    expect(hasShape('local-steps', 'local-steps')).toBe(true);
  });

  it('a shape from a newer API is refused, not read as an older one', () => {
    expect(() => hasShape('steps-of-tomorrow' as OrderShape, 'lean')).toThrow(
      /unknown OrderLifecycle shape "steps-of-tomorrow"/,
    );
  });
});
