#!/usr/bin/env node
// Checks that every relative link of the documentation resolves: README.md, CONTRIBUTING.md and
// docs/**/*.md. A link to a file or folder must name one that exists in the repository; a link with
// an #anchor into a Markdown file must name one of that file's headings, slugged as GitHub slugs
// them (or an explicit <a id|name>). External links (https:, mailto:, …) are not fetched: the check
// runs offline, in `npm test`, and must not fail because a website is down.
//
// Plain Node on purpose (no dependency): the Markdown needed here is links, headings and code
// fences, and GitHub's slug rule is short (github-slugger: lower case, drop what is not a letter,
// mark, number, connector, space or hyphen, spaces to hyphens, -1, -2… for repeats).
//
//   node scripts/check-docs.mjs [file.md …]     (default: the documentation)
//
// Prints each broken link as `file:line: link: why`, and each page of docs/ that the index
// (docs/README.md) does not link, and exits 1 when there is one.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The documentation: the two top-level pages and everything under docs/. */
function documentationFiles() {
  const files = ['README.md', 'CONTRIBUTING.md']
    .map((name) => join(root, name))
    .filter((file) => existsSync(file));
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  if (existsSync(join(root, 'docs'))) walk(join(root, 'docs'));
  return files;
}

/**
 * The lines of a Markdown file that are prose, each with its 1-based number: fenced code blocks are
 * left out (a `[x](y)` or `# comment` inside one is code, not a link or a heading), and so are
 * inline code spans (replaced by their text for headings, by blanks for links).
 */
function proseLines(text) {
  const lines = [];
  let fence;
  text.split('\n').forEach((line, index) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (
        marker &&
        marker[1][0] === fence[0] &&
        marker[1].length >= fence.length &&
        line.trim() === marker[1].trim()
      )
        fence = undefined;
      return;
    }
    if (marker) {
      fence = marker[1];
      return;
    }
    lines.push({ number: index + 1, line });
  });
  return lines;
}

/** GitHub's slug of a heading's text (github-slugger), before the -1, -2 of repeats. */
function slug(text) {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A heading's text as GitHub renders it: code spans keep their text, links their label, emphasis and HTML go. */
function headingText(markdown) {
  return markdown
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(\*\*|__|\*|_)(?=\S)([^*_]*?\S)\1/g, '$2')
    .replace(/\\(.)/g, '$1')
    .trim();
}

const anchorCache = new Map();

/** The anchors a Markdown file defines: its headings' slugs (repeats numbered) and explicit <a id|name>. */
function anchorsOf(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const anchors = new Set();
  const seen = new Map();
  const add = (base) => {
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  };
  const lines = proseLines(readFileSync(file, 'utf8'));
  lines.forEach(({ line }, index) => {
    const atx = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) add(slug(headingText(atx[1])));
    // A setext heading: text underlined by === or --- on the next prose line.
    const next = lines[index + 1];
    if (
      !atx &&
      line.trim() !== '' &&
      next &&
      next.number === lines[index].number + 1 &&
      /^\s{0,3}(=+|-+)\s*$/.test(next.line) &&
      !/^\s*[-*+]\s/.test(line) &&
      !line.includes('|')
    )
      add(slug(headingText(line)));
    for (const match of line.matchAll(/<a\s[^>]*(?:id|name)\s*=\s*["']([^"']+)["']/gi))
      anchors.add(match[1]);
  });
  anchorCache.set(file, anchors);
  return anchors;
}

/** Every link target of a Markdown file, with its line: inline links and images, reference definitions, and HTML href/src. */
function linksOf(file) {
  const links = [];
  for (const { number, line } of proseLines(readFileSync(file, 'utf8'))) {
    const prose = line.replace(/`+[^`]*`+/g, (span) => ' '.repeat(span.length));
    // [label](target) or ![alt](target), the target optionally followed by a "title"; <target> allowed.
    for (const match of prose.matchAll(
      /!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g,
    ))
      links.push({ number, target: match[1].replace(/^<|>$/g, '') });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(prose);
    if (definition) links.push({ number, target: definition[1].replace(/^<|>$/g, '') });
    for (const match of prose.matchAll(/\s(?:href|src)\s*=\s*["']([^"']+)["']/gi))
      links.push({ number, target: match[1] });
  }
  return links;
}

/** Why a link of `file` is broken, or undefined when it resolves. */
function problemOf(file, target) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return undefined; // external: not checked offline
  const hash = target.indexOf('#');
  const pathPart = hash === -1 ? target : target.slice(0, hash);
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  let path;
  try {
    path = decodeURIComponent(pathPart.split('?')[0]);
  } catch {
    return 'not a valid URL path';
  }
  // GitHub reads a leading / as the repository's root.
  const resolved =
    path === '' ? file : path.startsWith('/') ? join(root, path) : resolve(dirname(file), path);
  const inside = relative(root, resolved);
  if (inside.startsWith('..') || inside.startsWith(sep)) return 'points outside the repository';
  if (!existsSync(resolved)) return `${relative(root, resolved) || '.'} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(resolved).isDirectory()) return `#${anchor}: a folder has no anchors`;
  if (!resolved.endsWith('.md')) {
    // GitHub's line anchors of a source file: #L12 or #L12-L20.
    return /^L\d+(-L\d+)?$/.test(anchor)
      ? undefined
      : `#${anchor}: only #L<line> anchors exist in ${relative(root, resolved)}`;
  }
  if (anchorsOf(resolved).has(anchor)) return undefined;
  return `#${anchor} is not a heading of ${relative(root, resolved)}`;
}

const files =
  process.argv.length > 2
    ? process.argv.slice(2).map((file) => resolve(file))
    : documentationFiles();
let broken = 0;
let checked = 0;
for (const file of files) {
  for (const { number, target } of linksOf(file)) {
    checked += 1;
    const problem = problemOf(file, target);
    if (problem === undefined) continue;
    broken += 1;
    console.error(`${relative(root, file)}:${number}: ${target}: ${problem}`);
  }
}

// docs/README.md is the index of every page: a page it does not link is one nobody finds.
const index = join(root, 'docs', 'README.md');
if (process.argv.length <= 2 && existsSync(index)) {
  const indexed = new Set(
    linksOf(index).map(({ target }) =>
      resolve(dirname(index), decodeURIComponent(target.split('#')[0])),
    ),
  );
  for (const file of files.filter(
    (file) => file.startsWith(join(root, 'docs') + sep) && file !== index,
  )) {
    if (indexed.has(file)) continue;
    broken += 1;
    console.error(`docs/README.md: ${relative(root, file)} is not in the index`);
  }
}
if (broken > 0) {
  console.error(
    `docs: ${broken} problem(s); ${checked} link(s) checked in ${files.length} file(s)`,
  );
  process.exit(1);
}
console.log(`docs: ${checked} link(s) in ${files.length} file(s), all resolve`);
