// The public API report: for every entry of the packages' `exports` (packages/*/package.json), API Extractor writes
// what the built declarations (packages/*/dist/) export, as one api-report/<entry>.api.md each. `npm run api` checks that the
// committed reports still describe the API — a change to the public API fails until its report is committed with
// it; `npm run api -- --update` rewrites them. One compiler program serves every entry (a program per entry costs
// a second or more each). TypeScript prints a union of string literals in the order it first met them anywhere in the
// program, which an unrelated change can flip: the reports list such unions sorted, and are compared so.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const ROOT = resolve(import.meta.dirname, '..');
const update = process.argv.includes('--update');
/** The packages whose entries are reported, by folder, and the prefix of their reports' names. */
const PACKAGES = [
  { dir: 'packages/ctrlmetrics', prefix: '' },
  { dir: 'packages/envtest', prefix: 'envtest' },
  { dir: 'packages/cli', prefix: 'cli' },
];

/**
 * Each entry with a types file: its report's name and its declarations. `ctrlmetrics/internal` is left out: the
 * other two packages' window into the runtime, not an API (they pin its exact version).
 */
const entries = PACKAGES.flatMap(({ dir, prefix }) => {
  const pkgFile = join(ROOT, dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
  return Object.entries(pkg.exports)
    .filter(([sub, target]) => typeof target === 'object' && target.types && sub !== './internal')
    .map(([sub, target]) => {
      const own = sub === '.' ? '' : sub.slice(2).replaceAll('/', '-');
      return {
        name: [prefix, own].filter(Boolean).join('-') || pkg.name,
        subpath: sub === '.' ? pkg.name : `${pkg.name}/${sub.slice(2)}`,
        types: join(ROOT, dir, target.types),
        pkgFile,
      };
    });
});
for (const e of entries) {
  if (!existsSync(e.types)) {
    console.error(`${e.types} is missing: run \`npm run build\` first`);
    process.exit(1);
  }
}

const temp = mkdtempSync(join(tmpdir(), 'ctrlmetrics-api-'));
mkdirSync(join(temp, 'out'));
const configFor = (e) =>
  ExtractorConfig.prepare({
    configObject: {
      projectFolder: ROOT,
      mainEntryPointFilePath: e.types,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2023'],
            types: ['node'],
            strict: true,
            skipLibCheck: true,
          },
          files: entries.map((x) => x.types),
        },
      },
      // written to the temp folder and compared below (API Extractor's own comparison is order-sensitive)
      apiReport: {
        enabled: true,
        reportFileName: `${e.name}.api.md`,
        reportFolder: join(temp, 'out'),
        reportTempFolder: temp,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          // the library marks no release stages (@public/@beta): everything exported is public
          'ae-missing-release-tag': { logLevel: 'none' },
          // a type reached only through another entry's export is listed in the report, for its reviewer
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
          // TypeDoc checks that every export is documented (`npm run docs`), with its own rules
          'ae-undocumented': { logLevel: 'none' },
          'ae-unresolved-link': { logLevel: 'none' },
        },
        // TypeDoc, not TSDoc, reads the comments (`npm run docs` checks them)
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: e.pkgFile,
  });

const configs = entries.map(configFor);
const compilerState = CompilerState.create(configs[0], { additionalEntryPoints: entries.map((e) => e.types) });

/** A report with every union of string literals sorted (`"b" | "a"` → `"a" | "b"`). */
const sortedUnions = (text) =>
  text.replace(/"[^"\n]*"(?: \| "[^"\n]*")+/g, (union) => union.split(' | ').sort().join(' | '));

const changed = [];
let failed = false;
for (const [i, e] of entries.entries()) {
  const result = Extractor.invoke(configs[i], {
    localBuild: true,
    compilerState,
    messageCallback: (m) => {
      // its notes on the report files (compared here) and on its TypeScript version
      if (
        [
          'console-api-report-changed',
          'console-api-report-copied',
          'console-api-report-created',
          'console-compiler-version-notice',
          'console-preamble',
        ].includes(m.messageId)
      )
        m.handled = true;
      // any other warning or error (a declaration it cannot analyze, a rule above set to warn) fails the check
      else if (m.logLevel === 'warning' || m.logLevel === 'error') failed = true;
    },
  });
  if (result.errorCount > 0) failed = true;
  const report = sortedUnions(readFileSync(join(temp, `${e.name}.api.md`), 'utf8'));
  const committed = join(ROOT, 'api-report', `${e.name}.api.md`);
  if (existsSync(committed) && readFileSync(committed, 'utf8') === report) continue;
  changed.push(`api-report/${e.name}.api.md (${e.subpath})`);
  if (update) writeFileSync(committed, report);
}
rmSync(temp, { recursive: true, force: true });
if (changed.length && !update) {
  console.error(
    `The public API differs from its committed report in:\n  ${changed.join('\n  ')}\n` +
      'If the change is meant, run `npm run build && npm run api -- --update` and commit the reports with it.',
  );
  process.exit(1);
}
if (failed) process.exit(1);
console.log(
  update
    ? `API reports written (${changed.length} changed of ${entries.length})`
    : `API reports match (${entries.length} entries)`,
);
