import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { IPFIX_STATS } from '../../src/ipfix/stats';

it('the README documents every counter an IPFIX source’s stats() returns', () => {
  const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('**Loss accounting.**'));
  expect(Object.keys(IPFIX_STATS).filter((name) => !table.includes(`| \`${name}\` |`))).toEqual([]);
});
