/**
 * `ctrlmetrics generate helm` / `edit --enable helm`: the chart made from the project's kustomize output, rendered as
 * Helm's engine renders it (test/helpers/helm-render: Go's text/template with Sprig), installs the objects
 * `kubectl kustomize config/default` renders, object by object — for a fresh project and for one with a kind, its
 * webhooks and every edit option on; values move the image, the replicas, the namespace and switch the CRDs and the
 * metrics Service; a chart file its user edited stays unless forced. Its time goes to kustomize renders: CI's second
 * Node major skips it (test/helpers/second-node.ts).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { createApi } from '../../packages/cli/src/scaffold/create-api.js';
import { createWebhook } from '../../packages/cli/src/scaffold/create-webhook.js';
import { SCAFFOLD_OPTIONS, editProject, type ScaffoldOption } from '../../packages/cli/src/scaffold/edit.js';
import { generateHelmChart, CHART_DIR } from '../../packages/cli/src/scaffold/helm.js';
import { ScaffoldError } from '../../packages/cli/src/scaffold/errors.js';
import { writeCrds, writeRoles, writeWebhooks } from '../../packages/cli/src/generate/index.js';
import { renderChart } from '../helpers/helm.js';
import { run, runCli } from '../helpers/process.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

type Obj = Record<string, any>;
let work: string;
before(() => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-helm-'));
});
after(() => rmSync(work, { recursive: true, force: true }));

async function kustomized(app: string): Promise<Obj[]> {
  const r = await run('kubectl', ['kustomize', join(app, 'config/default')], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
}

const key = (o: Obj) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

/**
 * The chart's objects (rendered with `values`) and kustomize's for the project in `expectedApp` (by default the
 * chart's own), the Namespace aside (Helm installs into the release's), compared one by one.
 */
async function assertSameObjects(app: string, name: string, values: Obj = {}, expectedApp = app): Promise<void> {
  const expected = (await kustomized(expectedApp)).filter((o) => o.kind !== 'Namespace');
  const rendered = await renderChart(join(app, CHART_DIR), { name, namespace: `${name}-system` }, values);
  for (const o of rendered) {
    // the chart keeps its CRDs on uninstall (crd.keep): the one annotation kustomize's have not
    const a = o.metadata?.annotations as Record<string, string> | undefined;
    if (o.kind === 'CustomResourceDefinition' && a?.['helm.sh/resource-policy'] === 'keep') {
      delete a['helm.sh/resource-policy'];
      if (Object.keys(a).length === 0) delete o.metadata.annotations;
    }
  }
  assert.deepEqual(rendered.map(key).sort(), expected.map(key).sort());
  const byKey = new Map(rendered.map((o) => [key(o), o]));
  for (const o of expected) assert.deepEqual(byKey.get(key(o)), o, key(o));
}

/** A project with one kind, its webhooks when asked, and the edit options given; its CRDs, roles and webhooks generated. */
async function kindProject(app: string, opts: { webhooks: boolean; enable: ScaffoldOption[] }): Promise<void> {
  await initProject({ projectName: 'full-op', domain: 'example.com', dir: app, ctrlmetricsVersion: '^0.1.0' });
  await createApi({ dir: app, group: 'fleet', version: 'v1', kind: 'Frigate' });
  if (opts.webhooks)
    await createWebhook({
      dir: app,
      group: 'fleet',
      version: 'v1',
      kind: 'Frigate',
      defaulting: true,
      programmaticValidation: true,
    });
  await writeCrds({ paths: ['src'], outputDir: 'config/crd/bases', root: app });
  await writeRoles({ paths: ['src'], output: 'config/rbac/role.yaml', root: app });
  if (opts.webhooks) await writeWebhooks({ paths: ['src'], output: 'config/webhook/manifests.yaml', root: app });
  if (opts.enable.length) await editProject(app, { enable: opts.enable });
}

/** The manager without --leader-elect, as a user who turned it off in config/manager writes it. */
function withoutLeaderElection(app: string): void {
  const file = join(app, 'config/manager/manager.yaml');
  const text = readFileSync(file, 'utf8');
  assert.match(text, /^ *- --leader-elect\n/m);
  writeFileSync(file, text.replace(/^ *- --leader-elect\n/m, ''));
}

test(
  'a fresh project: the chart renders what kustomize renders, and values move what they name',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const app = join(work, 'fresh-op');
    await initProject({ projectName: 'fresh-op', dir: app, ctrlmetricsVersion: '^0.1.0' });
    const r = await generateHelmChart(app);
    assert.ok(r.written.includes('Chart.yaml') && r.written.includes('values.yaml'));
    assert.equal(
      (parse(readFileSync(join(app, CHART_DIR, 'Chart.yaml'), 'utf8')) as { name: string }).name,
      'fresh-op',
    );
    await assertSameObjects(app, 'fresh-op');

    const objects = await renderChart(
      join(app, CHART_DIR),
      { name: 'rel', namespace: 'ops' },
      {
        manager: { image: { repository: 'example.com/fresh-op', tag: 'v1.2.3' }, replicas: 3 },
        metrics: { enable: false },
      },
    );
    const deploy = objects.find((o) => o.kind === 'Deployment')!;
    assert.equal(deploy.spec.replicas, 3);
    assert.equal(deploy.spec.template.spec.containers[0].image, 'example.com/fresh-op:v1.2.3');
    assert.deepEqual(
      deploy.spec.template.spec.containers[0].resources,
      (parse(readFileSync(join(app, CHART_DIR, 'values.yaml'), 'utf8')) as Obj).manager.resources,
    );
    assert.equal(
      objects.find((o) => o.kind === 'Service' && /metrics-service$/.test(o.metadata.name)),
      undefined,
    );
    // every namespaced object, and every binding's subject, in the release's namespace
    for (const o of objects) if (o.metadata.namespace !== undefined) assert.equal(o.metadata.namespace, 'ops', key(o));
    for (const b of objects.filter((o) => /RoleBinding$/.test(o.kind)))
      for (const s of b.subjects) if (s.kind === 'ServiceAccount') assert.equal(s.namespace, 'ops');
    assert.ok(!objects.some((o) => o.kind === 'Namespace'));

    // the metrics Service off: what kustomize renders without metrics_service.yaml
    const noMetrics = join(work, 'fresh-no-metrics');
    cpSync(app, noMetrics, { recursive: true });
    const kustomization = join(noMetrics, 'config/default/kustomization.yaml');
    const text = readFileSync(kustomization, 'utf8');
    assert.match(text, /^- metrics_service\.yaml\n/m);
    writeFileSync(kustomization, text.replace(/^- metrics_service\.yaml\n/m, ''));
    await assertSameObjects(app, 'fresh-op', { metrics: { enable: false } }, noMetrics);
  },
);

test(
  'a kind with webhooks and every option on: the same objects; the CRDs switched and kept by values',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const app = join(work, 'full-op');
    await kindProject(app, { webhooks: true, enable: ['prometheus', 'metrics-tls', 'network-policy', 'grafana'] });
    await generateHelmChart(app);
    await assertSameObjects(app, 'full-op');

    const chart = join(app, CHART_DIR);
    const crd = (await renderChart(chart, { name: 'x', namespace: 'x' })).find(
      (o) => o.kind === 'CustomResourceDefinition',
    )!;
    assert.equal(crd.metadata.annotations['helm.sh/resource-policy'], 'keep');
    const notKept = (await renderChart(chart, { name: 'x', namespace: 'x' }, { crd: { keep: false } })).find(
      (o) => o.kind === 'CustomResourceDefinition',
    )!;
    assert.equal(notKept.metadata.annotations?.['helm.sh/resource-policy'], undefined);
    const none = await renderChart(chart, { name: 'x', namespace: 'x' }, { crd: { enable: false } });
    assert.ok(!none.some((o) => o.kind === 'CustomResourceDefinition'));
    // the webhook's certificate and the CA injection name the release's namespace
    const hooks = await renderChart(chart, { name: 'x', namespace: 'team-a' });
    const cert = hooks.find((o) => o.kind === 'Certificate' && /serving-cert$/.test(o.metadata.name))!;
    assert.ok(
      cert.spec.dnsNames.every((n: string) => n.includes('.team-a.svc')),
      cert.spec.dnsNames.join(', '),
    );
    const mutating = hooks.find((o) => o.kind === 'MutatingWebhookConfiguration')!;
    assert.match(mutating.metadata.annotations['cert-manager.io/inject-ca-from'], /^team-a\//);
    assert.equal(mutating.webhooks[0].clientConfig.service.namespace, 'team-a');
  },
);

test(
  'every switch of values.yaml off, alone and all together, renders what kustomize renders without it',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const app = join(work, 'switched', 'full');
    await kindProject(app, { webhooks: true, enable: ['prometheus', 'metrics-tls', 'network-policy', 'grafana'] });
    await generateHelmChart(app);
    /** a copy of the project changed as a user would to turn an option off */
    const variant = async (name: string, change: (dir: string) => Promise<unknown> | void) => {
      const dir = join(work, 'switched', name);
      cpSync(app, dir, { recursive: true });
      await change(dir);
      return dir;
    };
    const cases: Array<[string, Obj, string]> = [
      ['leader election', { manager: { leaderElection: false } }, await variant('no-le', withoutLeaderElection)],
      [
        'metrics.secure',
        { metrics: { secure: false } },
        await variant('no-tls', (d) => editProject(d, { disable: ['metrics-tls'] })),
      ],
      [
        'prometheus',
        { metrics: { secure: false }, prometheus: { enable: false } },
        await variant('no-prom', (d) => editProject(d, { disable: ['prometheus'] })),
      ],
      [
        'network policy',
        { networkPolicy: { enable: false } },
        await variant('no-np', (d) => editProject(d, { disable: ['network-policy'] })),
      ],
      [
        'grafana',
        { grafana: { enable: false } },
        await variant('no-grafana', (d) => editProject(d, { disable: ['grafana'] })),
      ],
    ];
    // webhooks off: the same project made without create webhook
    const noHooks = join(work, 'switched', 'no-hooks');
    await kindProject(noHooks, { webhooks: false, enable: ['prometheus', 'metrics-tls', 'network-policy', 'grafana'] });
    cases.push(['webhooks', { webhook: { enable: false } }, noHooks]);
    const noCertManager = join(work, 'switched', 'no-cm');
    await kindProject(noCertManager, { webhooks: false, enable: ['prometheus', 'network-policy', 'grafana'] });
    cases.push([
      'cert-manager',
      { webhook: { enable: false }, certManager: { enable: false }, metrics: { secure: false } },
      noCertManager,
    ]);
    const bare = join(work, 'switched', 'bare');
    await kindProject(bare, { webhooks: false, enable: [] });
    withoutLeaderElection(bare);
    cases.push([
      'all off',
      {
        manager: { leaderElection: false },
        metrics: { secure: false },
        webhook: { enable: false },
        certManager: { enable: false },
        prometheus: { enable: false },
        networkPolicy: { enable: false },
        grafana: { enable: false },
      },
      bare,
    ]);
    for (const [what, values, expected] of cases) {
      await assertSameObjects(app, 'full-op', values, expected).catch((e: unknown) => {
        throw new Error(`${what} off: ${(e as Error).message}`, { cause: e });
      });
    }

    // what cannot render stops the install with why
    await assert.rejects(
      renderChart(join(app, CHART_DIR), { name: 'x', namespace: 'x' }, { certManager: { enable: false } }),
      /metrics\.secure needs certManager\.enable/,
    );
    await assert.rejects(
      renderChart(
        join(app, CHART_DIR),
        { name: 'x', namespace: 'x' },
        { certManager: { enable: false }, metrics: { secure: false } },
      ),
      /webhook\.enable needs certManager\.enable/,
    );
    await assert.rejects(
      renderChart(join(app, CHART_DIR), { name: 'x', namespace: 'x' }, { metrics: { enable: false } }),
      /needs metrics\.enable/,
    );
    // a switch the project does not have cannot be turned on in its chart
    await generateHelmChart(bare);
    await assert.rejects(
      renderChart(join(bare, CHART_DIR), { name: 'x', namespace: 'x' }, { prometheus: { enable: true } }),
      /prometheus\.enable: the project this chart was made from has none of it \(ctrlmetrics edit --enable prometheus, then ctrlmetrics generate helm\)/,
    );
  },
);

test(
  'each option of edit, on and then off, in a project with a chart: the refreshed chart follows kustomize',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const app = join(work, 'each-op');
    await initProject({ projectName: 'each-op', dir: app, ctrlmetricsVersion: '^0.1.0' });
    await generateHelmChart(app);
    const switchOff: Record<ScaffoldOption, Obj> = {
      prometheus: { prometheus: { enable: false } },
      certmanager: { certManager: { enable: false } },
      'metrics-tls': { metrics: { secure: false } },
      'network-policy': { networkPolicy: { enable: false } },
      grafana: { grafana: { enable: false } },
      sharding: { sharding: { enable: false } },
    };
    assert.deepEqual(Object.keys(switchOff).sort(), [...SCAFFOLD_OPTIONS].sort(), 'a switch for every option of edit');
    for (const option of Object.keys(switchOff) as ScaffoldOption[]) {
      const before = join(work, `each-op-before-${option}`);
      cpSync(app, before, { recursive: true });
      await editProject(app, { enable: [option] });
      await generateHelmChart(app);
      await assertSameObjects(app, 'each-op');
      // its switch off: the project as it was before the option
      await assertSameObjects(app, 'each-op', switchOff[option], before).catch((e: unknown) => {
        throw new Error(`${option} switched off: ${(e as Error).message}`, { cause: e });
      });
    }
    for (const option of (Object.keys(switchOff) as ScaffoldOption[]).reverse()) {
      await editProject(app, { disable: [option] });
      await generateHelmChart(app);
      await assertSameObjects(app, 'each-op');
    }
    const values = parse(readFileSync(join(app, CHART_DIR, 'values.yaml'), 'utf8')) as Obj;
    assert.equal(values.prometheus.enable, false);
    assert.equal(values.manager.leaderElection, true);
  },
);

test(
  'an edited chart file stays unless forced; objects gone from the kustomize output leave the chart',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const app = join(work, 'kept-op');
    await initProject({ projectName: 'kept-op', dir: app, ctrlmetricsVersion: '^0.1.0' });
    await editProject(app, { enable: ['prometheus'] });
    await generateHelmChart(app);
    const monitor = (dir: string) =>
      existsSync(
        join(dir, CHART_DIR, 'templates/prometheus/servicemonitor-kept-op-controller-manager-metrics-monitor.yaml'),
      );
    assert.ok(monitor(app));
    appendFileSync(join(app, CHART_DIR, 'values.yaml'), 'extra: 1\n');
    await editProject(app, { disable: ['prometheus'] });
    await assert.rejects(generateHelmChart(app), (e: unknown) => {
      return (
        e instanceof ScaffoldError &&
        /has files edited since ctrlmetrics wrote them \(values\.yaml\); pass --force/.test(e.message)
      );
    });
    assert.ok(monitor(app), 'nothing written by the refused run');
    const r = await generateHelmChart(app, { force: true });
    assert.deepEqual(r.removed, [
      'templates/prometheus/servicemonitor-kept-op-controller-manager-metrics-monitor.yaml',
    ]);
    assert.ok(!monitor(app));
    assert.doesNotMatch(readFileSync(join(app, CHART_DIR, 'values.yaml'), 'utf8'), /extra: 1/);
    await assertSameObjects(app, 'kept-op');
  },
);

test(
  'edit --enable helm writes the chart and records it; later edits refresh it; --disable helm forgets it',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const app = join(work, 'cli-op');
    await initProject({ projectName: 'cli-op', dir: app, ctrlmetricsVersion: '^0.1.0' });
    const on = await runCli(['edit', '--enable', 'helm', '--dir', app], { timeoutMs: 120_000 });
    assert.equal(on.code, 0, on.stderr);
    assert.match(on.stdout, /dist\/chart\/Chart\.yaml written\n/);
    assert.match(on.stdout, /^enabled helm \(PROJECT\)$/m);
    assert.deepEqual((parse(readFileSync(join(app, 'PROJECT'), 'utf8')) as Obj).plugins, {
      'helm.ctrlmetrics.io/v1': {},
    });
    const np = await runCli(['edit', '--enable', 'network-policy', '--dir', app], { timeoutMs: 120_000 });
    assert.equal(np.code, 0, np.stderr);
    assert.match(np.stdout, /templates\/network-policy\/.*written/);
    await assertSameObjects(app, 'cli-op');
    const off = await runCli(['edit', '--disable', 'helm', '--dir', app], { timeoutMs: 60_000 });
    assert.equal(off.code, 0, off.stderr);
    assert.match(off.stdout, /^disabled helm \(PROJECT\); dist\/chart is left as it is/m);
    const gen = await runCli(['generate', 'helm', '--dir', app], { timeoutMs: 120_000 });
    assert.equal(gen.code, 0, gen.stderr);
    assert.match(gen.stdout, /no changes/);
  },
);
