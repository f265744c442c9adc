import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../lib/config/index.js';
import { codeIn, readDoc, tableRows } from '../helpers/markdown.js';

describe('docs/operations.md lists the configuration lib/config/ reads', () => {
  it('names every variable, and only those', () => {
    const listed = tableRows(readDoc('operations.md'), '| variable | default |').map(([variable]) => codeIn(variable!));
    expect(listed.sort()).toEqual([...CONFIG_VARIABLES].sort());
  });
});
