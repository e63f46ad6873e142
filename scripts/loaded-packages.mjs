#!/usr/bin/env node
// Prints, as JSON, the npm packages that importing a module loads, e.g.
// `node scripts/loaded-packages.mjs src/index.ts`. test/entry-points.test.ts uses it to prove that
// `import 'zk-plan'` stays lean. The module is imported in a child process under tsx, with an ESM
// resolve hook and a CommonJS resolve wrapper (for require and createRequire) that record every
// file resolved under node_modules, so a package counts whichever way it is loaded.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// What tsx itself loads before the import starts is not the module's doing.
const START = '--- import starts ---';
const entry = process.argv[2];
if (entry === undefined) {
  console.error('usage: node scripts/loaded-packages.mjs <module path>');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'zk-plan-loaded-'));
try {
  const record = join(dir, 'resolved.txt');
  writeFileSync(record, '');
  const esmHook = join(dir, 'esm-hook.mjs');
  const esmRegister = join(dir, 'esm-register.mjs');
  const cjsHook = join(dir, 'cjs-hook.cjs');
  // Appends synchronously, so every file is on record even if the import throws.
  writeFileSync(
    esmHook,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(record)}, result.url + '\\n');
  return result;
}
`,
  );
  writeFileSync(
    esmRegister,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(esmHook).href)});\n`,
  );
  writeFileSync(
    cjsHook,
    `const Module = require('node:module');
const { appendFileSync } = require('node:fs');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const file = resolveFilename.apply(this, args);
  appendFileSync(${JSON.stringify(record)}, file + '\\n');
  return file;
};
`,
  );
  const target = pathToFileURL(resolve(entry)).href;
  execFileSync(
    process.execPath,
    [
      '--require',
      cjsHook,
      '--import',
      'tsx',
      '--import',
      pathToFileURL(esmRegister).href,
      '-e',
      `(await import('node:fs')).appendFileSync(${JSON.stringify(record)}, '${START}\\n'); await import(${JSON.stringify(target)})`,
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const packages = new Set();
  const lines = readFileSync(record, 'utf8').split('\n');
  for (const file of lines.slice(lines.indexOf(START) + 1)) {
    const match = /[/\\]node_modules[/\\]((?:@[^/\\]+[/\\])?[^/\\]+)[/\\]/.exec(file);
    if (match) packages.add(match[1].replace('\\', '/'));
  }
  console.log(JSON.stringify([...packages].sort()));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
