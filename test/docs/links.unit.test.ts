import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';

/**
 * The README, docs/ and bench/README.md link to each other and into the code. This reads every page
 * and fails on a relative link whose file does not exist (or lies outside the repository), on an
 * `#anchor` that no heading of its page makes (GitHub's slugs), and on an `npm run <script>` that
 * package.json lacks.
 */
const PAGES = [
  'README.md',
  'bench/README.md',
  ...readdirSync(join(PROJECT_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const SCRIPTS = Object.keys(
  (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
);

/** The lines outside fenced code blocks: a `#` or a `[x](y)` inside a fence is code, not markdown. */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** A code span's text can hold anything that looks like a link; it is none. */
const withoutCodeSpans = (line: string) => line.replace(/`[^`]*`/g, 'code');

/** GitHub's anchor for a heading: the rendered text, lower-cased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text only
    .replace(/`([^`]*)`/g, '$1') // code spans' text
    .replace(/\*+/g, ''); // emphasis
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the page's headings make, repeats numbered as GitHub numbers them (`-1`, `-2`, …). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The targets of the page's inline links and images, external ones (`https:`, `mailto:` …) left out. */
function relativeLinks(markdown: string): string[] {
  return proseLines(markdown)
    .map(withoutCodeSpans)
    .flatMap((line) => [...line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!))
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** `npm start`, `npm test` and `npm run [-s] <script>` anywhere on the page, code blocks included. */
function npmScriptsNamed(markdown: string): string[] {
  const run = [...markdown.matchAll(/\bnpm\s+run\s+(?:(?:-s|--silent)\s+)?([a-z][\w:.-]*)/g)].map((m) => m[1]!);
  const shorthand = [...markdown.matchAll(/\bnpm\s+(start|test)\b/g)].map((m) => m[1]!);
  return [...run, ...shorthand];
}

/** What is wrong with the links of `page` (a path from the repository's root), one line each. */
function brokenLinks(page: string, read: (path: string) => string | undefined): string[] {
  const markdown = read(page) ?? '';
  const problems: string[] = [];
  for (const target of relativeLinks(markdown)) {
    const [path = '', anchor] = target.split('#', 2);
    const file =
      path === '' ? page : relative(PROJECT_ROOT, resolve(PROJECT_ROOT, dirname(page), decodeURIComponent(path)));
    if (file.startsWith(`..${sep}`) || file === '..') {
      problems.push(`${page}: ${target} points outside the repository`);
      continue;
    }
    const content = read(file);
    if (content === undefined) {
      problems.push(`${page}: ${target}: no file ${file}`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!file.endsWith('.md')) problems.push(`${page}: ${target}: an anchor into a file that is not markdown`);
    else if (!anchorsOf(content).has(anchor))
      problems.push(`${page}: ${target}: no heading in ${file} makes #${anchor}`);
  }
  return problems;
}

/** A repository file's text ('' for a directory), undefined when there is none. */
function readRepoFile(path: string): string | undefined {
  const full = join(PROJECT_ROOT, path);
  if (!existsSync(full)) return undefined;
  return statSync(full).isDirectory() ? '' : readFileSync(full, 'utf8');
}

describe('the checks themselves', () => {
  it("make GitHub's slugs", () => {
    expect(slug('Who wins: the database')).toBe('who-wins-the-database');
    expect(slug('Temporal Server as `npm start` runs it')).toBe('temporal-server-as-npm-start-runs-it');
    expect(slug("Temporal's store: a SQLite file, chosen by measurement")).toBe(
      'temporals-store-a-sqlite-file-chosen-by-measurement',
    );
    expect(slug('The storm: 1,000 orders expiring in the same second')).toBe(
      'the-storm-1000-orders-expiring-in-the-same-second',
    );
    expect(slug('Workflow shapes: first and lean')).toBe('workflow-shapes-first-and-lean');
    expect([...anchorsOf('# A\n## Same\n```\n# not a heading\n```\n## Same\n')]).toEqual(['a', 'same', 'same-1']);
  });

  it('find a missing file, a missing anchor, a link out of the repository, and leave code and URLs alone', () => {
    const pages: Record<string, string> = {
      'docs/a.md': [
        '# Title',
        '[ok](b.md#section) [ok](#title) [ok](../README.md) [ok](https://example.com/x#y)',
        '[gone](missing.md) [no anchor](b.md#nowhere) [own anchor](#nope) [outside](../../shared/CONTRACT.md)',
        '`[in code](nothing.md)`',
        '```',
        '[in a fence](nothing.md)',
        '```',
      ].join('\n'),
      'docs/b.md': '## Section\n',
      'README.md': '',
    };
    expect(brokenLinks('docs/a.md', (path) => pages[path])).toEqual([
      'docs/a.md: missing.md: no file docs/missing.md',
      'docs/a.md: b.md#nowhere: no heading in docs/b.md makes #nowhere',
      'docs/a.md: #nope: no heading in docs/a.md makes #nope',
      'docs/a.md: ../../shared/CONTRACT.md points outside the repository',
    ]);
  });

  it('find the npm scripts a page names', () => {
    expect(
      npmScriptsNamed(
        '`npm start -- --cluster`, npm test, `npm run -s token -- alice`, npm run db:fakes; the `npm run` scripts',
      ),
    ).toEqual(['token', 'db:fakes', 'start', 'test']);
  });
});

describe.each(PAGES)('%s', (page) => {
  it('links only to files that exist and to headings that make the anchor', () => {
    expect(brokenLinks(page, readRepoFile)).toEqual([]);
  });

  it('names only npm scripts that package.json has', () => {
    expect(npmScriptsNamed(readRepoFile(page)!).filter((script) => !SCRIPTS.includes(script))).toEqual([]);
  });
});

it('reads every page: the README and docs/ with its guides', () => {
  expect(PAGES).toEqual(
    expect.arrayContaining(['README.md', 'docs/api.md', 'docs/architecture.md', 'docs/glossary.md']),
  );
});
