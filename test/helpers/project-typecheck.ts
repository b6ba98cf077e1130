/**
 * Type-checks a generated project (its src/ and test/) with its own tsconfig, strict and with no unused names,
 * against this repository's sources (`ctrlmetrics` and `@ctrlmetrics/envtest` mapped to their packages' src/), so a renamed export
 * breaks this repository's tests rather than a user's first build. Answers the errors in the project's own files.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export async function typeErrorsOfProject(app: string): Promise<string[]> {
  writeFileSync(
    join(app, 'tsconfig.check.json'),
    JSON.stringify({
      extends: './tsconfig.json',
      include: ['src/**/*.ts', 'test/**/*.ts'],
      compilerOptions: {
        noEmit: true,
        rootDir: '/',
        baseUrl: '.',
        // kubernetes-types (the built-in kinds' types, which the project's package.json names) from this repository's
        paths: {
          ctrlmetrics: [join(ROOT, 'packages/ctrlmetrics/src/index.ts')],
          'ctrlmetrics/*': [join(ROOT, 'packages/ctrlmetrics/src/exports/*.ts')],
          '@ctrlmetrics/envtest': [join(ROOT, 'packages/envtest/src/index.ts')],
          'kubernetes-types/*': [join(ROOT, 'node_modules/kubernetes-types/*')],
        },
        typeRoots: [join(ROOT, 'node_modules/@types')],
        noUnusedLocals: true,
        noUnusedParameters: true,
      },
    }),
  );
  const out = await new Promise<string>((res) =>
    execFile(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.check.json', '--pretty', 'false'],
      { cwd: app, timeout: 120_000, maxBuffer: 32 << 20 },
      (_err, stdout, stderr) => res(stdout + stderr),
    ),
  );
  // errors inside this repository's files belong to the parts being written there; the project's are the generator's
  return out.split('\n').filter((l) => /error TS\d+/.test(l) && !resolve(app, l.split('(')[0]).startsWith(`${ROOT}/`));
}
