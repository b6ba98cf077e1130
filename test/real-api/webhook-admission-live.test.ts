/**
 * Admission webhooks called by a real kube-apiserver and by the authority, side by side: the same configurations
 * (pointed at one scripted webhook endpoint on 127.0.0.1 that both servers call) and the same kubectl commands,
 * scenario by scenario — mutation, denial (with and without causes), warnings, selectors, Fail and Ignore on an
 * unreachable webhook, a timeout, a server-side dry run, reinvocation, a refused delete — and what kubectl printed
 * (and what the webhook received) compared after normalising ports.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { startTestCluster, type ApiCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually, run } from '../helpers/process.js';
import { jsonPatch, ScriptedWebhook, type AdmissionReview } from '../helpers/scripted-webhook.js';
import { runName, startRealKube, webhooksUnreachable, type RealKube } from '../helpers/real-kube.js';

// their webhooks run on this machine: the API server must reach its 127.0.0.1
const WEBHOOK_SKIP = await webhooksUnreachable();

const GROUP_PATH = '/apis/admissionregistration.k8s.io/v1';
type Hook = Record<string, unknown>;
type Kind = 'mutating' | 'validating';

interface Scenario {
  name: string;
  configs: Array<{ kind: Kind; name: string; webhooks: Hook[] }>;
  commands: Array<{ args: string[]; input?: string }>;
}

describe(
  'admission webhooks: a real kube-apiserver and the authority call them alike',
  { skip: WEBHOOK_SKIP, timeout: 300_000 },
  () => {
    let kube: RealKube;
    let authority: TestCluster;
    let hook: ScriptedWebhook;
    let closed: Server;
    let closedPort = 0;

    before(async () => {
      hook = await ScriptedWebhook.start();
      // a port that refuses connections: listen, remember, close
      closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      closedPort = (closed.address() as { port: number }).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      [kube, authority] = await Promise.all([startRealKube(), startTestCluster()]);
      hook.on('/sentinel', () => ({ response: { allowed: true } }));
      hook.on('/label', () => ({
        response: { allowed: true, ...jsonPatch([{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }]) },
      }));
      hook.on('/deny', () => ({
        response: { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no writes here' } },
      }));
      hook.on('/deny-causes', (r) => ({
        response: {
          allowed: false,
          status: {
            code: 422,
            reason: 'Invalid',
            message: `ConfigMap "${r.request.name}" is invalid: data.a: Invalid value: "1": must be even`,
            details: {
              name: r.request.name,
              kind: 'ConfigMap',
              causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "1": must be even', field: 'data.a' }],
            },
          },
        },
      }));
      hook.on('/warn', () => ({ response: { allowed: true, warnings: ['first thing', 'second thing'] } }));
      hook.on('/slow', () => ({ response: { allowed: true }, delayMs: 2500 }));
      hook.on('/a', (r) => ({
        response: {
          allowed: true,
          ...(r.request.object.metadata.labels?.a
            ? {}
            : jsonPatch([
                { op: 'add', path: '/metadata/labels', value: { ...r.request.object.metadata.labels, a: 'yes' } },
              ])),
        },
      }));
      hook.on('/b', () => ({
        response: { allowed: true, ...jsonPatch([{ op: 'add', path: '/metadata/labels/b', value: 'yes' }]) },
      }));
      hook.on('/guard-delete', (r) => ({
        response:
          r.request.operation === 'DELETE' ? { allowed: false, status: { message: 'kept' } } : { allowed: true },
      }));
    });
    after(async () => {
      await Promise.all([kube?.stop(), authority?.stop()]);
      await hook?.stop();
    });

    const kubectl = (c: ApiCluster, args: string[], input?: string) =>
      run('kubectl', ['--kubeconfig', c.kubeconfig, ...args], { timeoutMs: 30_000, input });
    const cm = (ns: string, name: string, labels: Record<string, string> = {}) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: ns, labels },
        data: { a: '1' },
      });

    /** A webhook for ConfigMaps in the scenario's namespace. */
    const webhook = (ns: string, name: string, path: string, extra: Hook = {}): Hook => ({
      name,
      clientConfig: { url: `${hook.url}${path}`, caBundle: hook.caBundle },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      ...extra,
    });

    /**
     * Installs the configurations, each with a sentinel webhook (called only for objects labelled for it), and waits
     * until every one is in force: kube-apiserver picks configurations up from its informer, a moment later.
     */
    async function install(c: ApiCluster, ns: string, s: Scenario): Promise<() => Promise<void>> {
      const created: string[] = [];
      for (const cfg of s.configs) {
        const sentinel = webhook(ns, `sentinel-${cfg.name}.example.com`, '/sentinel', {
          objectSelector: { matchLabels: { sentinel: cfg.name } },
          failurePolicy: 'Ignore',
        });
        const path = `${GROUP_PATH}/${cfg.kind}webhookconfigurations`;
        await c.admin.create(path, {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: cfg.kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration',
          metadata: { name: runName(`${s.name}-${cfg.name}`) },
          webhooks: [sentinel, ...cfg.webhooks],
        });
        created.push(`${path}/${runName(`${s.name}-${cfg.name}`)}`);
        const seen = () =>
          hook
            .callsTo('/sentinel')
            .some(
              (call) =>
                call.review.request.namespace === ns &&
                call.review.request.object?.metadata?.labels?.sentinel === cfg.name,
            );
        await eventually(
          async () => {
            await c.admin
              .create(`/api/v1/namespaces/${ns}/configmaps`, JSON.parse(cm(ns, 'probe', { sentinel: cfg.name })), {
                query: { dryRun: 'All' },
              })
              .catch(() => undefined);
            return seen();
          },
          `configuration ${cfg.name} in force`,
          20_000,
          200,
        );
      }
      return async () => {
        for (const p of created) await c.admin.delete(p).catch(() => undefined);
      };
    }

    /** Runs a scenario on one server: its commands' output, then what the webhook received (operations, names). */
    async function play(c: ApiCluster, tag: string, name: string): Promise<string> {
      const ns = runName(`wh-${name}-${tag}`);
      const s = scenarios(ns).find((x) => x.name === name)!;
      await c.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      // kube-controller-manager publishes kube-root-ca.crt into every new namespace a moment later: let that write
      // happen before the scenario's webhooks are in force, or they see it too
      await eventually(
        () =>
          c.admin.get(`/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`).then(
            () => true,
            () => false,
          ),
        `kube-root-ca.crt in ${ns}`,
        20_000,
        100,
      );
      const uninstall = await install(c, ns, s);
      const from = hook.calls.length;
      const out: string[] = [];
      try {
        for (const cmd of s.commands) {
          const args = cmd.args;
          const r = await kubectl(c, args, cmd.input);
          out.push(`$ kubectl ${args.join(' ')}\n${r.stdout}${r.stderr}[rc=${r.code}]`);
        }
      } finally {
        await uninstall();
      }
      const received = hook.calls
        .slice(from)
        .filter((call) => call.path !== '/sentinel' && call.review.request.namespace === ns)
        .map((call) => describeCall(call.path, call.review));
      out.push(`webhook calls:\n${received.join('\n')}`);
      return out
        .join('\n')
        .replaceAll(ns, '<ns>')
        .replaceAll(String(hook.port), '<hook-port>')
        .replaceAll(String(closedPort), '<closed-port>');
    }

    function describeCall(path: string, review: AdmissionReview): string {
      const r = review.request;
      const labels = r.object?.metadata?.labels ? JSON.stringify(r.object.metadata.labels) : '-';
      return `${path} ${r.operation} name=${r.name ?? ''} dryRun=${r.dryRun} labels=${labels} old=${r.oldObject ? 'yes' : 'no'} options=${r.options?.kind}`;
    }

    const scenarios = (ns: string): Scenario[] => [
      {
        name: 'mutation',
        configs: [{ kind: 'mutating', name: 'm', webhooks: [webhook(ns, 'label.example.com', '/label')] }],
        commands: [
          { args: ['create', '-f', '-'], input: cm(ns, 'x') },
          { args: ['get', 'configmap', 'x', '-n', ns, '-o', 'jsonpath={.metadata.labels}'] },
        ],
      },
      {
        name: 'denial',
        configs: [{ kind: 'validating', name: 'v', webhooks: [webhook(ns, 'deny.example.com', '/deny')] }],
        commands: [{ args: ['create', '-f', '-'], input: cm(ns, 'x') }, { args: ['get', 'configmap', 'x', '-n', ns] }],
      },
      {
        name: 'causes',
        configs: [{ kind: 'validating', name: 'v', webhooks: [webhook(ns, 'causes.example.com', '/deny-causes')] }],
        commands: [{ args: ['create', '-f', '-'], input: cm(ns, 'x') }],
      },
      {
        name: 'warning',
        configs: [{ kind: 'validating', name: 'v', webhooks: [webhook(ns, 'warn.example.com', '/warn')] }],
        commands: [{ args: ['create', '-f', '-'], input: cm(ns, 'x') }],
      },
      {
        name: 'selectors',
        configs: [
          {
            kind: 'validating',
            name: 'v',
            webhooks: [
              webhook(ns, 'sel.example.com', '/deny', { objectSelector: { matchLabels: { guarded: 'true' } } }),
            ],
          },
        ],
        commands: [
          { args: ['create', '-f', '-'], input: cm(ns, 'open') },
          { args: ['create', '-f', '-'], input: cm(ns, 'guarded', { guarded: 'true' }) },
        ],
      },
      {
        name: 'fail',
        configs: [
          {
            kind: 'validating',
            name: 'v',
            webhooks: [
              {
                ...webhook(ns, 'down.example.com', '/down'),
                clientConfig: { url: `https://127.0.0.1:${closedPort}/down`, caBundle: hook.caBundle },
              },
            ],
          },
        ],
        commands: [{ args: ['create', '-f', '-'], input: cm(ns, 'x') }],
      },
      {
        name: 'ignore',
        configs: [
          {
            kind: 'validating',
            name: 'v',
            webhooks: [
              {
                ...webhook(ns, 'down.example.com', '/down', { failurePolicy: 'Ignore' }),
                clientConfig: { url: `https://127.0.0.1:${closedPort}/down`, caBundle: hook.caBundle },
              },
            ],
          },
        ],
        commands: [
          { args: ['create', '-f', '-'], input: cm(ns, 'x') },
          { args: ['get', 'configmap', 'x', '-n', ns, '-o', 'name'] },
        ],
      },
      {
        name: 'timeout',
        configs: [
          {
            kind: 'validating',
            name: 'v',
            webhooks: [webhook(ns, 'slow.example.com', '/slow', { timeoutSeconds: 1 })],
          },
        ],
        commands: [{ args: ['create', '-f', '-'], input: cm(ns, 'x') }],
      },
      {
        name: 'dryrun',
        configs: [
          {
            kind: 'mutating',
            name: 'm',
            webhooks: [webhook(ns, 'label.example.com', '/label', { sideEffects: 'NoneOnDryRun' })],
          },
        ],
        commands: [
          { args: ['create', '--dry-run=server', '-o', 'jsonpath={.metadata.labels}', '-f', '-'], input: cm(ns, 'x') },
          { args: ['get', 'configmap', 'x', '-n', ns] },
        ],
      },
      {
        name: 'reinvocation',
        configs: [
          { kind: 'mutating', name: '2-b', webhooks: [webhook(ns, 'b.example.com', '/b')] },
          {
            kind: 'mutating',
            name: '1-a',
            webhooks: [webhook(ns, 'a.example.com', '/a', { reinvocationPolicy: 'IfNeeded' })],
          },
        ],
        commands: [
          { args: ['create', '-f', '-'], input: cm(ns, 'x') },
          { args: ['get', 'configmap', 'x', '-n', ns, '-o', 'jsonpath={.metadata.labels}'] },
        ],
      },
      {
        name: 'delete',
        configs: [
          {
            kind: 'validating',
            name: 'v',
            webhooks: [
              webhook(ns, 'guard.example.com', '/guard-delete', {
                rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['configmaps'] }],
              }),
            ],
          },
        ],
        commands: [
          { args: ['create', '-f', '-'], input: cm(ns, 'x') },
          { args: ['delete', 'configmap', 'x', '-n', ns] },
          { args: ['get', 'configmap', 'x', '-n', ns, '-o', 'name'] },
        ],
      },
    ];

    for (const name of [
      'mutation',
      'denial',
      'causes',
      'warning',
      'selectors',
      'fail',
      'ignore',
      'timeout',
      'dryrun',
      'reinvocation',
      'delete',
    ]) {
      test(`${name}: kubectl and the webhook see the same`, async () => {
        const real = await play(kube, 'real', name);
        const ours = await play(authority, 'ours', name);
        assert.equal(ours, real);
      });
    }
  },
);
