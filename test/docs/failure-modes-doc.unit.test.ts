import { expect, it } from 'vitest';
import { FAKE_EFFECT_INVARIANTS } from '../../dev/fakes/invariants.js';
import { BUSINESS_INVARIANTS } from '../../ops/invariants.js';
import { readDoc } from '../helpers/markdown.js';

const page = readDoc('failure-modes.md');

it("counts the invariant checker's two halves as the code defines them", () => {
  expect(page).toContain(`**${BUSINESS_INVARIANTS.length} business invariants**`);
  expect(page).toContain(`**${FAKE_EFFECT_INVARIANTS.length} fake-effect checks**`);
});
