/**
 * Hand-edited projects: `ctrlmetrics edit` refuses, with one clear message and without writing anything, when the
 * kustomizations were changed in a way it cannot switch safely, and completes (or removes) options switched by hand
 * only in part. `init` refuses a non-empty directory without --force and never replaces an existing directory.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { initProject, ScaffoldError } from '../../packages/cli/src/scaffold/init.js';
import { editProject, type EditRequest } from '../../packages/cli/src/scaffold/edit.js';

const DEF = 'config/default/kustomization.yaml';
const PROM = 'config/prometheus/kustomization.yaml';
let work: string;
let base: string;
let n = 0;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-edit-refusals-'));
  base = join(work, 'base');
  await initProject({ projectName: 'demo', dir: base, ctrlmetricsVersion: '^0.1.0' });
});
after(() => rmSync(work, { recursive: true, force: true }));

function kustomize(dir: string): Promise<string> {
  return new Promise((res, rej) =>
    execFile(
      'kubectl',
      ['kustomize', join(dir, 'config/default')],
      { timeout: 30_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        err ? rej(new Error(`kubectl kustomize failed: ${stderr || err.message}`)) : res(stdout),
    ),
  );
}

/** A copy of the fresh project, changed by `change`. */
function project(change: (dir: string) => void): string {
  const dir = join(work, `p${n++}`);
  cpSync(base, dir, { recursive: true });
  change(dir);
  return dir;
}

function rewrite(dir: string, rel: string, fn: (text: string) => string): void {
  const f = join(dir, rel);
  const before = readFileSync(f, 'utf8');
  const after = fn(before);
  assert.notEqual(after, before, `the test's change to ${rel} applies`);
  writeFileSync(f, after);
}

/** Every file of the project, path → content. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else out.set(r, readFileSync(join(d, e.name), 'utf8'));
    }
  };
  walk(dir, '');
  return out;
}

async function assertRefused(dir: string, req: EditRequest, pattern: RegExp): Promise<void> {
  const before = snapshot(dir);
  await assert.rejects(editProject(dir, req), (err: unknown) => {
    assert.ok(err instanceof ScaffoldError, `a ScaffoldError, got ${String(err)}`);
    assert.match(err.message, pattern);
    assert.doesNotMatch(err.message, /\n/, 'one line');
    return true;
  });
  assert.deepEqual(snapshot(dir), before, 'nothing written');
}

test('edit refuses a switched file referenced under another kustomize key (it would be applied twice)', async () => {
  const dir = project((d) =>
    rewrite(
      d,
      DEF,
      (t) =>
        t +
        'patchesJson6902:\n- path: cert_metrics_manager_patch.yaml\n  target:\n    kind: Deployment\n    name: controller-manager\n',
    ),
  );
  await assertRefused(
    dir,
    { enable: ['metrics-tls'] },
    /refers to cert_metrics_manager_patch\.yaml under "patchesJson6902"/,
  );

  const dir2 = project((d) => rewrite(d, DEF, (t) => t + 'components:\n- ../network-policy/\n'));
  await assertRefused(dir2, { enable: ['network-policy'] }, /refers to \.\.\/network-policy under "components"/);
});

test('edit refuses lists that are not lists, several documents and a missing TLS patch', async () => {
  const notAList = project((d) => rewrite(d, DEF, (t) => t + 'replacements:\n  note: filled in by our CI\n'));
  await assertRefused(notAList, { enable: ['certmanager'] }, /"replacements" is not a list/);

  const twoDocs = project((d) => rewrite(d, PROM, (t) => t + '---\nresources: []\n'));
  await assertRefused(
    twoDocs,
    { enable: ['metrics-tls'] },
    /config\/prometheus\/kustomization\.yaml must hold exactly one YAML document/,
  );

  const noPatch = project((d) => rmSync(join(d, 'config/prometheus/monitor_tls_patch.yaml')));
  await assertRefused(noPatch, { enable: ['metrics-tls'] }, /config\/prometheus\/monitor_tls_patch\.yaml not found/);

  const noGrafana = project((d) => rmSync(join(d, 'config/grafana'), { recursive: true }));
  await assertRefused(noGrafana, { enable: ['grafana'] }, /config\/grafana\/kustomization\.yaml not found/);
});

test('edit refuses a kubebuilder-style replacement with both targets in one block', async () => {
  // kubebuilder writes one block per source field with a Certificate and a ServiceMonitor target; switching our
  // per-kind blocks next to it would fill the fields twice (or leave the ServiceMonitor's when prometheus is off).
  const combined = `replacements:
- source:
    kind: Service
    version: v1
    name: controller-manager-metrics-service
    fieldPath: metadata.name
  targets:
  - select:
      kind: Certificate
      group: cert-manager.io
      version: v1
      name: metrics-certs
    fieldPaths:
    - spec.dnsNames.0
    - spec.dnsNames.1
    options:
      delimiter: '.'
      index: 0
      create: true
  - select:
      kind: ServiceMonitor
      group: monitoring.coreos.com
      version: v1
      name: controller-manager-metrics-monitor
    fieldPaths:
    - spec.endpoints.0.tlsConfig.serverName
    options:
      delimiter: '.'
      index: 0
      create: true
`;
  const dir = project((d) => rewrite(d, DEF, (t) => t.replace('#replacements:\n', combined)));
  await assertRefused(
    dir,
    { enable: ['certmanager'] },
    /replacement from controller-manager-metrics-service that ctrlmetrics edit does not know/,
  );
  // options that do not touch the replacements still work
  const r = await editProject(dir, { enable: ['network-policy'] });
  assert.deepEqual(r.changed, [DEF, 'PROJECT']);
});

test('init refuses a non-empty directory without --force, and adds the project to it with --force', async () => {
  const dir = join(work, 'non-empty');
  mkdirSync(join(dir, '.git'), { recursive: true });
  writeFileSync(join(dir, 'notes.txt'), 'mine\n');
  await assert.rejects(initProject({ projectName: 'demo', dir }), /is not empty \(notes\.txt\).*--force/);
  assert.deepEqual(readdirSync(dir).sort(), ['.git', 'notes.txt'], 'nothing written');

  const onlyGit = join(work, 'only-git');
  mkdirSync(join(onlyGit, '.git'), { recursive: true });
  await initProject({ projectName: 'demo', dir: onlyGit });
  assert.ok(readdirSync(onlyGit).includes('package.json'), 'a directory with only .git counts as empty');

  await initProject({ projectName: 'demo', dir, force: true });
  assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'mine\n');
  assert.ok(readdirSync(dir).includes('config'));
});

test('init into an existing empty directory keeps that directory (a shell inside it still sees the project)', async () => {
  const dir = join(work, 'existing-empty');
  mkdirSync(dir);
  const ino = statSync(dir).ino;
  await initProject({ projectName: 'demo', dir });
  assert.equal(statSync(dir).ino, ino, 'same directory, not a replacement');
  assert.ok(readdirSync(dir).includes('package.json'));
  assert.deepEqual(
    readdirSync(work).filter((e) => e.includes('ctrlmetrics-init')),
    [],
    'no staging directory left',
  );
});

test('a new project directory is readable by others like any directory (not the private mode of a temp dir)', async () => {
  const dir = join(work, 'fresh', 'nested');
  await initProject({ projectName: 'demo', dir });
  assert.equal(statSync(dir).mode & 0o777, 0o755);
  assert.equal(statSync(join(dir, 'config/default/kustomization.yaml')).mode & 0o777, 0o644);
});

test('edit completes an option enabled by hand only in part, and removes the rest of one disabled in part', async () => {
  // kubebuilder's trap: ../certmanager uncommented without the replacements leaves SERVICE_NAME placeholders
  const cert = project((d) => rewrite(d, DEF, (t) => t.replace('#- ../certmanager\n', '- ../certmanager\n')));
  const on = await editProject(cert, { enable: ['certmanager'] });
  assert.deepEqual(on.messages, ['certmanager was partly enabled by hand; enabled the rest of it']);
  const built = await kustomize(cert);
  assert.ok(!built.includes('SERVICE_NAME'), 'no placeholders once the replacements are on');
  assert.match(built, /- demo-controller-manager-metrics-service\.demo-system\.svc\n/);

  // the ServiceMonitor TLS patch switched on by hand without the manager's cert patch: Prometheus would expect a CA
  // the manager does not serve
  const tls = project((d) => {
    rewrite(d, DEF, (t) => t.replace('#- ../prometheus\n', '- ../prometheus\n'));
    rewrite(d, PROM, (t) =>
      t.replace(
        '#patches:\n#- path: monitor_tls_patch.yaml\n#  target:\n#    kind: ServiceMonitor\n',
        'patches:\n- path: monitor_tls_patch.yaml\n  target:\n    kind: ServiceMonitor\n',
      ),
    );
  });
  const off = await editProject(tls, { disable: ['metrics-tls'] });
  assert.deepEqual(off.messages, ['metrics-tls was partly enabled by hand; disabled the rest of it']);
  // the ServiceMonitor enabled by hand stays on, and PROJECT now records it
  assert.deepEqual(off.changed, [PROM, 'PROJECT']);
  assert.equal(
    readFileSync(join(tls, PROM), 'utf8'),
    readFileSync(join(base, PROM), 'utf8'),
    'back to the generated file',
  );
});

test('edit works on a kustomization a formatter re-indented (sequences indented under their key)', async () => {
  const dir = project((d) => {
    for (const rel of [DEF, PROM]) rewrite(d, rel, (t) => parseDocument(t).toString({ indentSeq: true, lineWidth: 0 }));
  });
  assert.match(
    readFileSync(join(dir, DEF), 'utf8'),
    /^resources:\n(?:.*#.*\n)* {2}- \.\.\/rbac$/m,
    'the test file uses indented sequences',
  );
  await editProject(dir, { enable: ['metrics-tls', 'network-policy'] });
  const text = readFileSync(join(dir, DEF), 'utf8');
  assert.match(text, /^ {2}- \.\.\/prometheus$/m, "entries switched on in the file's own style");
  assert.doesNotMatch(text, /^- /m, 'no entry in the other style');
  const built = await kustomize(dir);
  assert.match(built, /serverName: demo-controller-manager-metrics-service\.demo-system\.svc\n/);
  assert.match(built, /- demo-controller-manager-metrics-service\.demo-system\.svc\.cluster\.local\n/);
  assert.match(built, /kind: NetworkPolicy/);
  await editProject(dir, { disable: ['metrics-tls', 'prometheus', 'certmanager', 'network-policy'] });
  assert.doesNotMatch(await kustomize(dir), /kind: (ServiceMonitor|Certificate|NetworkPolicy)/);
});

test('edit changes both kustomizations or neither: a failed write of the second restores the first', async () => {
  // the temporary file of the second write cannot be created (a directory is in its place)
  const dir = project((d) => mkdirSync(join(d, `${PROM}.ctrlmetrics-edit-${process.pid}`)));
  const before = readFileSync(join(dir, DEF), 'utf8');
  await assert.rejects(editProject(dir, { enable: ['metrics-tls'] }), (err: unknown) => {
    assert.ok(err instanceof ScaffoldError);
    assert.equal(
      err.message,
      'cannot write config/prometheus/kustomization.yaml: a directory is in the way; nothing was changed',
    );
    return true;
  });
  assert.equal(readFileSync(join(dir, DEF), 'utf8'), before, 'config/default/kustomization.yaml restored');
  assert.equal(readFileSync(join(dir, PROM), 'utf8'), readFileSync(join(base, PROM), 'utf8'));
});

test('PROJECT records the options that are on as plugins, as kubebuilder records its own; other plugins are kept', async () => {
  const dir = project((d) =>
    rewrite(d, 'PROJECT', (t) =>
      t.replace('projectName:', 'plugins:\n  other.example.com/v1:\n    keep: true\nprojectName:'),
    ),
  );
  const plugins = () =>
    (parseDocument(readFileSync(join(dir, 'PROJECT'), 'utf8')).toJS() as { plugins?: Record<string, unknown> }).plugins;
  await editProject(dir, { enable: ['metrics-tls', 'grafana'] });
  // metrics-tls turned prometheus and certmanager on along with it
  assert.deepEqual(plugins(), {
    'certmanager.ctrlmetrics.io/v1': {},
    'grafana.ctrlmetrics.io/v1': {},
    'metrics-tls.ctrlmetrics.io/v1': {},
    'other.example.com/v1': { keep: true },
    'prometheus.ctrlmetrics.io/v1': {},
  });
  const r = await editProject(dir, { disable: ['prometheus', 'grafana'] });
  assert.ok(r.changed.includes('PROJECT'));
  assert.deepEqual(plugins(), { 'certmanager.ctrlmetrics.io/v1': {}, 'other.example.com/v1': { keep: true } });
  // nothing to change: PROJECT is left as it is
  assert.deepEqual((await editProject(dir, { enable: ['certmanager'] })).changed, []);
});

test('edit reads PROJECT before it writes: an unreadable one leaves the kustomizations as they were', async () => {
  const dir = project((d) => rewrite(d, 'PROJECT', (t) => t.replace('ctrlmetrics.io/v1', 'go.kubebuilder.io/v4')));
  await assertRefused(dir, { enable: ['prometheus'] }, /layout \["go.kubebuilder.io\/v4"\] is not supported/);
});
