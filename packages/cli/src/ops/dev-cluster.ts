/**
 * What `ctrlmetrics dev` changes on a cluster so a project's manager can run from a terminal, and how it puts the
 * cluster back: the CRDs and the metrics reader ClusterRole applied (kept, as kubebuilder's `make install` keeps
 * them), the project's webhook configurations and CRD conversions pointed at a webhook server on this machine with
 * a CA of its own (restored when dev stops), and a probe that the API server reaches that server at all.
 *
 * Only the project's own objects are touched: the configurations are named as `config/default`'s name prefix names
 * them (`<project>-<name>`), so another project's never match; one that exists (this project deployed) is saved and
 * put back as it was.
 */
import { createServer, type Server } from 'node:https';
import { randomBytes } from 'node:crypto';
import type { KubeClient } from 'ctrlmetrics/client';
import { OpsError } from './errors.js';
import { apiError, isStatus } from './kube.js';

/** A manifest object, as kustomize renders it. */
export interface DevObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
  };
  [key: string]: unknown;
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CLUSTER_ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
const WEBHOOK_COLLECTIONS: Record<string, string> = {
  MutatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  ValidatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
};
/** Marks what a dev session made, so a session that died without restoring is recognised (and not kept as the original). */
export const DEV_ANNOTATION = 'ctrlmetrics.io/dev-session';

/** Creates the object, or replaces it when it exists; answers whether it was created. */
async function createOrReplace(client: KubeClient, collection: string, obj: DevObject): Promise<'created' | 'updated'> {
  const name = String(obj.metadata?.name);
  try {
    await client.create(collection, obj);
    return 'created';
  } catch (err) {
    if (!isStatus(err, 409)) throw apiError(err, `create ${collection.split('/').pop()} ${name}`, client);
  }
  try {
    const current = await client.get<DevObject>(`${collection}/${name}`);
    await client.replace(`${collection}/${name}`, {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: current.metadata?.resourceVersion },
    });
    return 'updated';
  } catch (err) {
    throw apiError(err, `update ${collection.split('/').pop()} ${name}`, client);
  }
}

/** Applies the CRDs (as `make install`: created or updated, and kept); waits until each is Established. */
export async function installCrds(
  client: KubeClient,
  crds: DevObject[],
  log: (line: string) => void,
  timeoutMs = 30_000,
): Promise<void> {
  for (const crd of crds)
    log(`customresourcedefinition ${crd.metadata?.name} ${await createOrReplace(client, CRDS, crd)}`);
  for (const crd of crds) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = await client.get<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(
        `${CRDS}/${crd.metadata?.name}`,
      );
      if (got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline)
        throw new OpsError(
          `CRD ${crd.metadata?.name} was not Established within ${timeoutMs / 1000} s: kubectl describe crd ${crd.metadata?.name}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Applies the metrics reader ClusterRole (kept): `ctrlmetrics grant` binds scrapers to it. */
export async function installMetricsReaderRole(
  client: KubeClient,
  role: DevObject,
  log: (line: string) => void,
): Promise<void> {
  log(`clusterrole ${role.metadata?.name} ${await createOrReplace(client, CLUSTER_ROLES, role)}`);
}

/** Where the API server calls the local webhook server, and the CA it trusts. */
export interface LocalWebhookServer {
  /** `https://host:port` */
  url: string;
  caPem: string;
}

/** The project's webhook configuration pointed at the local server: URLs instead of the Service, the CA as caBundle. */
export function pointAtLocal(config: DevObject, server: LocalWebhookServer, session: string): DevObject {
  const caBundle = Buffer.from(server.caPem).toString('base64');
  const webhooks = (Array.isArray(config.webhooks) ? (config.webhooks as Array<Record<string, unknown>>) : []).map(
    (w) => {
      const cc = { ...((w.clientConfig as Record<string, unknown> | undefined) ?? {}) };
      const service = cc.service as { path?: string } | undefined;
      const path = service?.path ?? (typeof cc.url === 'string' ? new URL(cc.url).pathname : '/');
      delete cc.service;
      return { ...w, clientConfig: { ...cc, url: `${server.url}${path.startsWith('/') ? '' : '/'}${path}`, caBundle } };
    },
  );
  const { resourceVersion: _rv, ...metadata } = config.metadata ?? {};
  return {
    ...config,
    metadata: { ...metadata, annotations: { ...metadata.annotations, [DEV_ANNOTATION]: session } },
    webhooks,
  };
}

/** What {@link pointWebhooksAtLocal} changed, to put back. */
export interface DevChanges {
  /** Configurations dev created: deleted on restore. */
  created: Array<{ collection: string; name: string }>;
  /** Configurations that existed (this project, deployed): put back as they were. */
  replaced: Array<{ collection: string; original: DevObject }>;
  /** CRDs whose conversion dev pointed at the local server: their conversion before. */
  conversions: Array<{ name: string; conversion: unknown }>;
}

/**
 * Installs the project's webhook configurations (named `<project>-<name>`) and points the CRDs with a conversion
 * webhook at the local server. On a failure, what was changed is put back before the error is thrown.
 */
export async function pointWebhooksAtLocal(
  client: KubeClient,
  project: string,
  configs: DevObject[],
  conversionCrds: string[],
  server: LocalWebhookServer,
  session: string,
  log: (line: string) => void,
): Promise<DevChanges> {
  const changes: DevChanges = { created: [], replaced: [], conversions: [] };
  try {
    for (const c of configs) {
      const collection = WEBHOOK_COLLECTIONS[String(c.kind)];
      if (!collection) continue;
      const raw = String(c.metadata?.name ?? '');
      const name = raw.startsWith(`${project}-`) ? raw : `${project}-${raw}`;
      const body = pointAtLocal({ ...c, metadata: { ...c.metadata, name } }, server, session);
      let existing: DevObject | undefined;
      try {
        existing = await client.get<DevObject>(`${collection}/${name}`);
      } catch (err) {
        if (!isStatus(err, 404)) throw apiError(err, `get ${collection.split('/').pop()} ${name}`, client);
      }
      if (!existing) {
        await client.create(collection, body).catch((err: unknown) => {
          throw apiError(err, `create ${collection.split('/').pop()} ${name}`, client);
        });
        changes.created.push({ collection, name });
      } else {
        await client
          .replace(`${collection}/${name}`, {
            ...body,
            metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion },
          })
          .catch((err: unknown) => {
            throw apiError(err, `update ${collection.split('/').pop()} ${name}`, client);
          });
        // a leftover of a dev session that died is not an original to restore: it is removed
        if (existing.metadata?.annotations?.[DEV_ANNOTATION]) changes.created.push({ collection, name });
        else changes.replaced.push({ collection, original: existing });
      }
      log(`${String(c.kind).toLowerCase()} ${name} → ${server.url}`);
    }
    for (const name of conversionCrds) {
      const crd = await client.get<{ spec?: { conversion?: unknown } }>(`${CRDS}/${name}`);
      const clientConfig = {
        url: `${server.url}/convert`,
        caBundle: Buffer.from(server.caPem).toString('base64'),
        service: null,
      };
      await client.mergePatch(`${CRDS}/${name}`, {
        spec: { conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } } },
      });
      changes.conversions.push({ name, conversion: crd.spec?.conversion ?? { strategy: 'None' } });
      log(`customresourcedefinition ${name} conversion → ${server.url}/convert`);
    }
  } catch (err) {
    await restore(client, changes, () => undefined).catch(() => undefined);
    throw err;
  }
  return changes;
}

/**
 * Puts back what {@link pointWebhooksAtLocal} changed: the configurations it created deleted, those it replaced
 * restored, the CRDs' conversion as it was. Goes on past a failure and throws the failures together at the end.
 */
export async function restore(client: KubeClient, changes: DevChanges, log: (line: string) => void): Promise<void> {
  const failures: string[] = [];
  for (const { collection, name } of changes.created) {
    await client.delete(`${collection}/${name}`).then(
      () => log(`${collection.split('/').pop()!.replace(/s$/, '')} ${name} deleted`),
      (err: unknown) => {
        if (!isStatus(err, 404)) failures.push(`delete ${name}: ${(err as Error).message}`);
      },
    );
  }
  for (const { collection, original } of changes.replaced) {
    const name = String(original.metadata?.name);
    try {
      const current = await client.get<DevObject>(`${collection}/${name}`);
      const { resourceVersion: _rv, ...metadata } = original.metadata ?? {};
      await client.replace(`${collection}/${name}`, {
        ...original,
        metadata: { ...metadata, resourceVersion: current.metadata?.resourceVersion },
      });
      log(`${collection.split('/').pop()!.replace(/s$/, '')} ${name} restored`);
    } catch (err) {
      failures.push(`restore ${name}: ${(err as Error).message}`);
    }
  }
  for (const { name, conversion } of changes.conversions) {
    try {
      const current = await client.get<DevObject & { spec: Record<string, unknown> }>(`${CRDS}/${name}`);
      await client.replace(`${CRDS}/${name}`, { ...current, spec: { ...current.spec, conversion } });
      log(`customresourcedefinition ${name} conversion restored`);
    } catch (err) {
      if (!isStatus(err, 404)) failures.push(`restore the conversion of ${name}: ${(err as Error).message}`);
    }
  }
  if (failures.length) throw new OpsError(`could not put everything back: ${failures.join('; ')}`);
}

/**
 * Checks that the API server reaches a webhook server listening on this machine at `listenPort` under the URL of
 * `server`: serves a probe webhook there for one labelled ConfigMap, asks the API server to create that ConfigMap as
 * a dry run, and reads whether the call arrived. Resolves when it did; throws an {@link OpsError} that says why not
 * (a remote API server cannot reach this machine's loopback) otherwise. Leaves nothing behind.
 */
export async function probeWebhookReachable(
  client: KubeClient,
  project: string,
  server: LocalWebhookServer,
  tls: { certPem: string; keyPem: string },
  listenPort: number,
  timeoutMs = 20_000,
): Promise<void> {
  const id = randomBytes(4).toString('hex');
  const answer = `reached the webhook server of ctrlmetrics dev (${id})`;
  const probe: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      if (body.length < 1 << 20) body += c;
    });
    req.on('end', () => {
      let uid = '';
      try {
        uid = String((JSON.parse(body) as { request?: { uid?: string } }).request?.uid ?? '');
      } catch {
        // not a review: answered all the same
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid, allowed: false, status: { code: 403, message: answer } },
        }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new OpsError(
          err.code === 'EADDRINUSE'
            ? `port ${listenPort} is in use: pick another with --webhook-port`
            : `cannot listen on port ${listenPort}: ${err.message}`,
        ),
      ),
    );
    probe.listen(listenPort, () => resolve());
  });
  const collection = WEBHOOK_COLLECTIONS.ValidatingWebhookConfiguration;
  const name = `${project}-dev-probe-${id}`;
  const label = 'ctrlmetrics.io/dev-probe';
  try {
    await client
      .create(collection, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name, annotations: { [DEV_ANNOTATION]: id } },
        webhooks: [
          {
            name: 'probe.dev.ctrlmetrics.io',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Fail',
            timeoutSeconds: 5,
            objectSelector: { matchLabels: { [label]: id } },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
            clientConfig: { url: `${server.url}/probe`, caBundle: Buffer.from(server.caPem).toString('base64') },
          },
        ],
      })
      .catch((err: unknown) => {
        throw apiError(err, `create validatingwebhookconfiguration ${name}`, client);
      });
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        // a dry run: nothing is stored; the API server still calls webhooks with sideEffects None
        await client.create(
          '/api/v1/namespaces/default/configmaps',
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `dev-probe-${id}`, labels: { [label]: id } } },
          { query: { dryRun: 'All' } },
        );
        last = 'the API server did not call the probe webhook yet';
      } catch (err) {
        const message = (err as Error).message;
        if (message.includes(answer)) return;
        if (/failed calling webhook/.test(message)) {
          const host = new URL(client.config.server).hostname.replace(/^\[|\]$/g, '');
          const local = /^(127\.|localhost$|::1$)/.test(host);
          throw new OpsError(
            `the cluster's API server (${client.config.server}) cannot reach the webhook server at ${server.url}: ${message}. ` +
              (local
                ? 'ctrlmetrics dev serves the webhooks on this machine: give an address the API server reaches with --webhook-host (for kind, the docker bridge address, e.g. 172.17.0.1), or run without webhooks (ENABLE_WEBHOOKS=false)'
                : `the API server is not on this machine (${host}), so it cannot call 127.0.0.1: give an address of this machine it reaches with --webhook-host, or run without webhooks (ENABLE_WEBHOOKS=false)`),
          );
        }
        last = message;
        if (!isStatus(err, 0) && !isStatus(err, 500))
          throw apiError(err, 'create a dry-run ConfigMap to probe the webhook server', client);
      }
      if (Date.now() > deadline)
        throw new OpsError(`the webhook probe got no answer within ${timeoutMs / 1000} s (${last})`);
      // kube-apiserver picks up a new configuration from its informer a moment later
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await client.delete(`${collection}/${name}`).catch(() => undefined);
    probe.closeAllConnections();
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  }
}
