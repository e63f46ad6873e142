/**
 * The API reports of zk-plan's entry points: `npm run api` rewrites them, `npm run api:check` fails
 * when one differs from the checked-in api/*.api.md (CI, scripts/test.sh), so that a changed export
 * is a visible diff and an unexpected one fails the suite.
 *
 * Every entry point of package.json's "exports" gets a report: `.` is api/zk-plan.api.md,
 * `./testing` is api/zk-plan-testing.api.md, and so on, so a new entry point cannot go unreported.
 * They share api-extractor.json (which alone describes the root entry, for `npx api-extractor run`)
 * and one compiler run over the declarations.
 *
 * The declarations are those `npm run build` publishes (tsconfig.build.json, @internal stripped),
 * emitted alone into test-output/api/dts/ so that dist/ is left as the last build made it.
 *
 * API Extractor analyses one entry point at a time: a type that `zk-plan/metrics` takes from the
 * root entry (ZkPlan, say) would be reported there as a forgotten export although users import it
 * from `zk-plan`. Such a forgotten export is dropped when the root entry exports the name; any
 * other stays an error.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
} from '@microsoft/api-extractor';
import type { Program } from 'typescript';

const local = process.argv.includes('--local');
const root = resolve(import.meta.dirname, '..');
const dtsDir = resolve(root, 'test-output/api/dts');
const configPath = resolve(root, 'api-extractor.json');
const packageJsonPath = resolve(root, 'package.json');

interface EntryPoint {
  /** The subpath of package.json's "exports" (`.`, `./testing`, …). */
  readonly subpath: string;
  /** The report's file name without `.api.md`. */
  readonly reportName: string;
  /** The entry's declaration file among the emitted ones. */
  readonly dts: string;
}

/** The entry points of package.json that have declarations, the root entry first. */
function entryPoints(): EntryPoint[] {
  const manifest = JSON.parse(readFileSync(packageJsonPath, 'utf8')) as {
    exports: Record<string, { types?: string } | string>;
  };
  const entries: EntryPoint[] = [];
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (typeof target !== 'object' || target.types === undefined) continue;
    const reportName =
      subpath === '.' ? 'zk-plan' : `zk-plan-${subpath.replace(/^\.\//, '').replaceAll('/', '-')}`;
    entries.push({
      subpath,
      reportName,
      dts: resolve(dtsDir, target.types.replace(/^\.\/dist\//, '')),
    });
  }
  return entries.sort((a, b) => Number(b.subpath === '.') - Number(a.subpath === '.'));
}

/** Emits the declarations afresh, so that one of a deleted source file cannot linger. */
function emitDeclarations(): void {
  rmSync(dtsDir, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(
    process.execPath,
    [
      tsc,
      '-p',
      'tsconfig.build.json',
      '--emitDeclarationOnly',
      '--sourceMap',
      'false',
      '--outDir',
      dtsDir,
    ],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}

/** The configuration of one entry point: api-extractor.json with this entry's declarations and report name. */
function configFor(entry: EntryPoint): ExtractorConfig {
  const configObject = ExtractorConfig.loadFile(configPath);
  configObject.mainEntryPointFilePath = entry.dts;
  configObject.apiReport = {
    ...configObject.apiReport,
    enabled: true,
    reportFileName: entry.reportName,
  };
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: configPath,
    packageJsonFullPath: packageJsonPath,
  });
}

/** The names a declaration file exports, as the shared program sees them. */
function exportedNames(compilerState: CompilerState, dts: string): Set<string> {
  // API Extractor types its program `unknown`; it is a program of the TypeScript it bundles, the project's version.
  const program = compilerState.program as Program;
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(dts);
  const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
  if (module === undefined) throw new Error(`api-report: ${dts} is not in the program`);
  return new Set(checker.getExportsOfModule(module).map((symbol) => symbol.name));
}

emitDeclarations();
const entries = entryPoints();
const configs = entries.map(configFor);
const [rootEntry, rootConfig] = [entries[0], configs[0]];
if (rootEntry?.subpath !== '.' || rootConfig === undefined)
  throw new Error('api-report: package.json exports no root entry "."');
const compilerState = CompilerState.create(rootConfig, {
  additionalEntryPoints: entries.slice(1).map((entry) => entry.dts),
});
const rootNames = exportedNames(compilerState, rootEntry.dts);

let failed = 0;
for (const [index, entry] of entries.entries()) {
  const config = configs[index] as ExtractorConfig;
  const forgottenElsewhere: string[] = [];
  const messageCallback = (message: ExtractorMessage): void => {
    if (entry.subpath === '.' || message.messageId !== 'ae-forgotten-export') return;
    const name = /The symbol "([^"]+)"/.exec(message.text)?.[1];
    if (name === undefined || !rootNames.has(name)) return;
    forgottenElsewhere.push(name);
    message.logLevel = ExtractorLogLevel.None;
    message.handled = true;
  };
  // A check prints the difference, so that the log of a failed run shows which exports changed.
  const result = Extractor.invoke(config, {
    localBuild: local,
    compilerState,
    messageCallback,
    printApiReportDiff: !local,
  });
  const from =
    forgottenElsewhere.length === 0
      ? ''
      : ` (from zk-plan: ${[...new Set(forgottenElsewhere)].sort().join(', ')})`;
  console.log(
    `api: ${entry.subpath} → api/${entry.reportName}.api.md${result.apiReportChanged ? ' changed' : ''}${from}`,
  );
  if (!result.succeeded) failed += 1;
}
if (failed > 0) {
  console.error(
    local
      ? `api: ${failed} entry point(s) failed: fix the errors above`
      : `api: ${failed} entry point(s) differ from api/ or have errors: run \`npm run api\` and commit api/ if the change is meant`,
  );
  process.exit(1);
}
