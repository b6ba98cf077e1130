/**
 * The options a project's Helm chart switches with values, and how each is found in the project and taken out of
 * a copy of its `config/` (to see, by rendering the copy, what the option brings). An option that needs others
 * (the verified metrics certificate needs Prometheus and cert-manager; webhooks need cert-manager) is taken out
 * with what needs it, as `ctrlmetrics edit` does.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { ScaffoldError } from './errors.js';
import { editProject, patchIs, readOptionState, resourceIs, type ScaffoldOption } from './edit.js';
import { hasEntry, type EntryMatcher } from './yaml-list.js';

/** An option of the chart: the value that switches it and what it takes. */
export interface ChartSwitch {
  /** where values.yaml holds it: `webhook.enable` */
  value: string;
  /** values.yaml's comment on it */
  about: string;
  /** how a project gets it (the chart cannot turn on what the project did not render) */
  hint: string;
  /** values that must be on while this one is */
  needs: string[];
  /** true when the project renders it */
  on(root: string): boolean;
  /** takes it (and what needs it) out of a copy of the project */
  takeOut(copy: string): Promise<void>;
}

const DEFAULT_KUSTOMIZATION = 'config/default/kustomization.yaml';
const MANAGER = 'config/manager/manager.yaml';
const LEADER_ELECT = /^[ \t]*- --leader-elect[ \t]*\n/m;

const option = (o: ScaffoldOption) => async (copy: string) => {
  await editProject(copy, { disable: [o] });
};

/** Drops the entries of a list of a kustomization that `match` says (no comments kept: the copy is thrown away). */
function dropEntries(file: string, key: string, match: EntryMatcher): void {
  if (!existsSync(file)) return;
  const doc = parseDocument(readFileSync(file, 'utf8'));
  const list = doc.toJS() as Record<string, unknown> | null;
  if (!list || !Array.isArray(list[key])) return;
  list[key] = (list[key] as unknown[]).filter((e) => !match(e));
  writeFileSync(file, JSON.stringify(list));
}

/** The admission and conversion webhooks' wiring, out of a copy: what `create webhook` put in. */
async function takeOutWebhooks(copy: string): Promise<void> {
  dropEntries(join(copy, DEFAULT_KUSTOMIZATION), 'resources', resourceIs('../webhook'));
  dropEntries(join(copy, DEFAULT_KUSTOMIZATION), 'patches', patchIs('manager_webhook_patch.yaml'));
  dropEntries(join(copy, DEFAULT_KUSTOMIZATION), 'replacements', (e) => {
    const name = (e as { source?: { name?: unknown } } | null)?.source?.name;
    return name === 'webhook-service' || name === 'serving-cert';
  });
  dropEntries(join(copy, 'config/certmanager/kustomization.yaml'), 'resources', resourceIs('certificate-webhook.yaml'));
  dropEntries(
    join(copy, 'config/network-policy/kustomization.yaml'),
    'resources',
    resourceIs('allow-webhook-traffic.yaml'),
  );
  dropEntries(
    join(copy, 'config/crd/kustomization.yaml'),
    'patches',
    (e) => !!e && typeof e === 'object' && /(^|\/)webhook_in_[^/]*$/.test(String((e as { path?: unknown }).path)),
  );
  return Promise.resolve();
}

const hasWebhooks = (root: string) => {
  const file = join(root, DEFAULT_KUSTOMIZATION);
  return existsSync(file) && hasEntry(parseDocument(readFileSync(file, 'utf8')), 'resources', resourceIs('../webhook'));
};

/** The chart's options, in the order values.yaml lists them. */
export const CHART_SWITCHES: readonly ChartSwitch[] = [
  {
    value: 'manager.leaderElection',
    about: 'one active manager at a time, by a Lease (--leader-elect)',
    hint: 'add --leader-elect to the manager args in config/manager/manager.yaml',
    needs: [],
    on: (root) => existsSync(join(root, MANAGER)) && LEADER_ELECT.test(readFileSync(join(root, MANAGER), 'utf8')),
    takeOut: (copy) => {
      const file = join(copy, MANAGER);
      writeFileSync(file, readFileSync(file, 'utf8').replace(LEADER_ELECT, ''));
      return Promise.resolve();
    },
  },
  {
    value: 'metrics.secure',
    about:
      "the metrics endpoint serves cert-manager's certificate and Prometheus verifies it (edit --enable metrics-tls); off: a self-signed certificate Prometheus does not verify",
    hint: 'ctrlmetrics edit --enable metrics-tls',
    needs: ['metrics.enable', 'prometheus.enable', 'certManager.enable'],
    on: (root) => readOptionState(root)['metrics-tls'],
    takeOut: option('metrics-tls'),
  },
  {
    value: 'webhook.enable',
    about: "the admission and conversion webhooks: their Service, configurations, certificate and the manager's port",
    hint: 'ctrlmetrics create webhook',
    needs: ['certManager.enable'],
    on: hasWebhooks,
    takeOut: takeOutWebhooks,
  },
  {
    value: 'certManager.enable',
    about: "cert-manager's Issuer and Certificates (cert-manager must be installed in the cluster)",
    hint: 'ctrlmetrics edit --enable certmanager',
    needs: [],
    on: (root) => readOptionState(root).certmanager,
    takeOut: async (copy) => {
      await takeOutWebhooks(copy);
      // sharding goes with it (the sharder's certificate is cert-manager's)
      await option('certmanager')(copy);
    },
  },
  {
    value: 'prometheus.enable',
    about: "a ServiceMonitor for the Prometheus Operator's Prometheus",
    hint: 'ctrlmetrics edit --enable prometheus',
    needs: ['metrics.enable'],
    on: (root) => readOptionState(root).prometheus,
    takeOut: option('prometheus'),
  },
  {
    value: 'networkPolicy.enable',
    about:
      "NetworkPolicies that let only namespaces labelled metrics=enabled reach the metrics port (and anyone the webhooks')",
    hint: 'ctrlmetrics edit --enable network-policy',
    needs: [],
    on: (root) => readOptionState(root)['network-policy'],
    takeOut: option('network-policy'),
  },
  {
    value: 'sharding.enable',
    about:
      'the manager as a ring of shards (its replicas, POD_NAME, --sharding-ring) and the sharder: its Deployment, Service, certificate, RBAC and the ControllerRing CRD',
    hint: 'ctrlmetrics edit --enable sharding',
    needs: ['certManager.enable'],
    on: (root) => readOptionState(root).sharding,
    takeOut: option('sharding'),
  },
  {
    value: 'grafana.enable',
    about: "the Grafana dashboards' ConfigMaps",
    hint: 'ctrlmetrics edit --enable grafana',
    needs: [],
    on: (root) => readOptionState(root).grafana,
    takeOut: option('grafana'),
  },
];

/** `kubectl kustomize config/default` of the project in `dir`. */
export function kustomize(dir: string): Promise<string> {
  return new Promise((res, rej) =>
    execFile(
      'kubectl',
      ['kustomize', join(dir, 'config', 'default')],
      { timeout: 120_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT')
          rej(new ScaffoldError('generate helm reads the kustomize output: it needs kubectl (1.21 or later) on PATH'));
        else if (err)
          rej(
            new ScaffoldError(
              `kubectl kustomize config/default failed: ${(stderr || err.message).trim().split('\n')[0]}`,
            ),
          );
        else res(stdout);
      },
    ),
  );
}

/** The kustomize output of the project in `root` with `sw` taken out (in a copy, thrown away after). */
export async function renderWithout(root: string, sw: ChartSwitch): Promise<string> {
  const copy = mkdtempSync(join(tmpdir(), 'ctrlmetrics-chart-'));
  try {
    cpSync(join(root, 'config'), join(copy, 'config'), { recursive: true });
    cpSync(join(root, 'PROJECT'), join(copy, 'PROJECT'));
    await sw.takeOut(copy);
    return await kustomize(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
