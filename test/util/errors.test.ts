/**
 * The library's errors: each class has a stable `code`, a wrap keeps the error it wraps as `cause`, and
 * `instanceof` holds for an error made by another copy of the library (a second copy of src/ loaded beside the
 * first, as an application that resolves two versions does), while errors of other classes stay apart. The CLI
 * prints the cause chain under -v.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as root from '../../packages/ctrlmetrics/src/index.js';
import * as config from '../../packages/ctrlmetrics/src/exports/config.js';
import * as manager from '../../packages/ctrlmetrics/src/exports/manager.js';
import { CliError, UsageError } from '../../packages/cli/src/cli/errors.js';
import { cliArgs } from '../helpers/process.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
/** The library's entries this test reaches, as one object: the root, `ctrlmetrics/config`, `ctrlmetrics/manager`. */
const lib = { ...root, ...config, ...manager };
let copyDir: string;
let other: typeof lib;
before(async () => {
  // inside the repository, so the copy resolves the same node_modules
  copyDir = await mkdtemp(join(ROOT, 'test', '.errors-copy-'));
  await cp(join(ROOT, 'packages/ctrlmetrics/src'), join(copyDir, 'src'), { recursive: true });
  const entries = await Promise.all(
    ['index.ts', 'exports/config.ts', 'exports/manager.ts'].map((f) => import(join(copyDir, 'src', f))),
  );
  other = Object.assign({}, ...entries) as typeof lib;
});
after(async () => {
  if (copyDir) await rm(copyDir, { recursive: true, force: true });
});

test('every error class has its own stable code; subclasses are instances of their bases', () => {
  const cases: Array<[Error & { code: string }, string]> = [
    [new lib.KubeApiError(404, 'NotFound', 'x'), 'ERR_KUBE_API'],
    [new lib.TerminalError('x'), 'ERR_TERMINAL'],
    [new lib.KubeConfigError('x'), 'ERR_KUBECONFIG'],
    [new lib.ManagerError('x'), 'ERR_MANAGER'],
    [new lib.AdmissionDeniedError(403, 'Forbidden', 'x'), 'ERR_ADMISSION_DENIED'],
    [new CliError('x'), 'ERR_CLI'],
    [new UsageError('x'), 'ERR_USAGE'],
  ];
  for (const [err, code] of cases) {
    assert.equal(err.code, code, err.name);
    assert.ok(err instanceof lib.CtrlmetricsError && err instanceof Error, err.name);
  }
  assert.ok(new UsageError('x') instanceof CliError);
  assert.ok(!(new CliError('x') instanceof UsageError), 'a base is not an instance of its subclass');
  assert.equal(
    new lib.AdmissionDeniedError(422, 'Invalid', 'x').status,
    422,
    "the HTTP status is `status`, as KubeApiError's",
  );
});

test('instanceof holds across two copies of the library, and only for the class (or its bases)', () => {
  assert.notEqual(other.KubeApiError, lib.KubeApiError, 'two copies: two classes');
  const fromOther = new other.KubeApiError(409, 'Conflict', 'the object has been modified');
  assert.ok(fromOther instanceof lib.KubeApiError);
  assert.ok(fromOther instanceof lib.CtrlmetricsError);
  assert.ok(!(fromOther instanceof lib.TerminalError));
  assert.ok(new lib.TerminalError('x') instanceof other.TerminalError);
  assert.ok(!(new lib.TerminalError('x') instanceof other.KubeApiError));
  // an error of the application's own, without the brand, by its prototype as always
  class Mine extends lib.KubeConfigError {}
  assert.ok(
    new Mine('x') instanceof Mine &&
      new Mine('x') instanceof lib.KubeConfigError &&
      new Mine('x') instanceof other.KubeConfigError,
  );
  assert.ok(
    !(new lib.KubeConfigError('x') instanceof Mine),
    'a subclass without a code of its own is told apart by its prototype',
  );
  assert.ok(!(new Error('x') instanceof lib.CtrlmetricsError));
  assert.ok(!({ code: 'ERR_KUBE_API' } instanceof lib.KubeApiError), 'a look-alike object is not one');
});

test('a wrap keeps what it wraps as cause: a kubeconfig whose CA file is missing', async () => {
  const dir = await mkdtemp(join(ROOT, 'test', '.errors-kc-'));
  try {
    const file = join(dir, 'config');
    await writeFile(
      file,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1", certificate-authority: missing-ca.crt}}]\n' +
        'contexts: [{name: x, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: SECRET-TOKEN}}]\ncurrent-context: x\n',
    );
    const err = await lib.loadRestConfig({ kubeconfig: file }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof lib.KubeConfigError);
    assert.equal((err.cause as NodeJS.ErrnoException).code, 'ENOENT');

    // the CLI: one line, and with -v the chain, each cause with its code; never the token
    const plain = await run(process.execPath, [...cliArgs(), 'monitors', '--kubeconfig', file, '-n', 'x']).then(
      () => undefined,
      (e: { stderr: string; code: number }) => e,
    );
    assert.equal(plain?.code, 1);
    assert.equal(
      plain?.stderr,
      `error: cannot read the certificate authority ${join(dir, 'missing-ca.crt')}: ENOENT\n`,
    );
    const verbose = await run(process.execPath, [...cliArgs(), '-v', 'monitors', '--kubeconfig', file, '-n', 'x']).then(
      () => undefined,
      (e: { stderr: string; code: number }) => e,
    );
    assert.equal(verbose?.code, 1);
    assert.deepEqual(verbose?.stderr.split('\n'), [
      `error: cannot read the certificate authority ${join(dir, 'missing-ca.crt')}: ENOENT`,
      `  caused by: cannot read the certificate authority ${join(dir, 'missing-ca.crt')}: ENOENT (ERR_KUBECONFIG)`,
      `  caused by: ENOENT: no such file or directory, open '${join(dir, 'missing-ca.crt')}' (ENOENT)`,
      '',
    ]);
    assert.doesNotMatch(verbose.stderr, /SECRET-TOKEN/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
