/**
 * envtest's webhook installation for the authority: a CA and a serving certificate for a local webhook server,
 * written where the manager's webhook server reads them (`tls.crt`, `tls.key`), the manifests' webhook
 * configurations installed with their client config pointed at that server and that CA as `caBundle`, and the
 * named CRDs' conversion pointed at its `/convert`.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KubeApiError, KubeClient } from 'ctrlmetrics/client';
import type { RestConfig } from 'ctrlmetrics/config';
import { generateCA, issueServingCert } from './pki.js';
import { isRecord, record, type JsonObject } from './json.js';
import type { KubeObject } from './types.js';

const KINDS: Record<string, string> = {
  MutatingWebhookConfiguration: 'mutatingwebhookconfigurations',
  ValidatingWebhookConfiguration: 'validatingwebhookconfigurations',
};
const API_VERSION = 'admissionregistration.k8s.io/v1';
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** Options of {@link installWebhooks}. */
export interface InstallWebhooksOptions {
  /**
   * Files or directories (their `.yaml`, `.yml` and `.json` files) holding the webhook configurations, e.g. the
   * project's `config/webhook`. Other kinds are skipped; only `admissionregistration.k8s.io/v1` is accepted.
   */
  manifests: string[];
  /**
   * Installed CRDs (by name, `memcacheds.cache.example.com`) whose objects the local server converts: each gets
   * envtest's conversion — strategy Webhook, review versions v1 and v1beta1, `https://host:port/convert` with the CA
   * as `caBundle` — so the API server calls the manager's `/convert` between their versions.
   */
  conversions?: string[];
  /** Host the webhook server listens on and the configurations call (default `127.0.0.1`). */
  host?: string;
  /** Its port (default: a free port, picked now). */
  port?: number;
  /** Where to write `tls.crt` and `tls.key` (default: a new temporary directory, removed by `uninstall`). */
  certDir?: string;
  /** Prepended to each configuration's name (default none): on a shared cluster, names no one else uses. */
  namePrefix?: string;
  /**
   * Replace a configuration of the same name that exists already (default true, as envtest). False: refuse with an
   * error naming it, so another's configuration is never overwritten (or deleted by `uninstall`).
   */
  replaceExisting?: boolean;
}

/** What {@link installWebhooks} set up: pass `bindAddress` and `certDir` to the manager's webhook server. */
export interface InstalledWebhooks {
  host: string;
  port: number;
  /** `host:port`, for the manager's `webhook.bindAddress`. */
  bindAddress: string;
  certDir: string;
  /** The CA that signed the serving certificate (what every `caBundle` now holds). */
  caPem: string;
  /** The configurations installed, as `<kind>/<name>`. */
  configurations: string[];
  /** The CRDs whose conversion now calls the local server. */
  conversions: string[];
  /** Deletes the installed configurations and a certificate directory this call created. */
  uninstall(): Promise<void>;
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The webhook configurations in manifest files and directories (envtest reads the same files). */
export function readWebhookConfigurations(paths: string[]): JsonObject[] {
  const out: JsonObject[] = [];
  for (const p of paths) {
    let files: string[];
    try {
      files = statSync(p).isDirectory()
        ? readdirSync(p)
            .filter((f) => /\.(ya?ml|json)$/.test(f))
            .sort()
            .map((f) => join(p, f))
        : [p];
    } catch {
      throw new Error(`webhook manifests ${p}: no such file or directory`);
    }
    for (const f of files) {
      for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
        if (doc.errors.length) throw new Error(`webhook manifests ${f}: ${doc.errors[0].message}`);
        const o: unknown = doc.toJS();
        if (!isRecord(o) || !KINDS[String(o.kind)]) continue;
        if (o.apiVersion !== API_VERSION)
          throw new Error(
            `webhook manifests ${f}: only ${API_VERSION} is supported for ${String(o.kind)} ${JSON.stringify(record(o.metadata)?.name ?? '')}, got ${String(o.apiVersion)}`,
          );
        out.push(o);
      }
    }
  }
  return out;
}

/**
 * Points each webhook at `https://host:port`: a service reference with a path becomes that URL with its path, a
 * URL keeps its own; every `caBundle` becomes `caPem`. A service reference without a path is left as it is (it
 * names no endpoint of the local server), as envtest leaves it.
 */
export function pointWebhooksAt(config: JsonObject, hostPort: string, caPem: string): JsonObject {
  const caBundle = Buffer.from(caPem).toString('base64');
  const webhooks = (Array.isArray(config.webhooks) ? config.webhooks : []).map((w: unknown) => {
    const cc: JsonObject = { ...record(record(w)?.clientConfig) };
    const servicePath = record(cc.service)?.path;
    if (typeof servicePath === 'string') {
      cc.url = `https://${hostPort}${servicePath.startsWith('/') ? '' : '/'}${servicePath}`;
      delete cc.service;
    }
    cc.caBundle = caBundle;
    return { ...record(w), clientConfig: cc };
  });
  return { ...config, webhooks };
}

/**
 * envtest's `WebhookInstallOptions` for the authority (or any API server reached with `authority.restConfig`):
 * makes a CA and a serving certificate for `host`, writes them to `certDir`, and creates (or replaces) the
 * manifests' webhook configurations pointed at `https://host:port` with that CA. Start the manager with
 * `webhook: { bindAddress, certDir }` to serve them.
 */
export async function installWebhooks(
  authority: { restConfig: RestConfig },
  opts: InstallWebhooksOptions,
): Promise<InstalledWebhooks> {
  const configs = readWebhookConfigurations(opts.manifests);
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? (await freePort(host));
  const ownDir = !opts.certDir;
  const certDir = opts.certDir ?? mkdtempSync(join(tmpdir(), 'ctrlmetrics-webhook-certs-'));
  const ca = await generateCA('ctrlmetrics-webhook-ca');
  const serving = await issueServingCert(ca, [...new Set(['localhost', '127.0.0.1', '::1', host])]);
  mkdirSync(certDir, { recursive: true });
  writeFileSync(join(certDir, 'tls.crt'), serving.certPem, { mode: 0o640 });
  writeFileSync(join(certDir, 'tls.key'), serving.keyPem, { mode: 0o600 });
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const client = new KubeClient(authority.restConfig);
  const installed: string[] = [];
  const converted: string[] = [];
  try {
    for (const c of configs) {
      const path = `/apis/admissionregistration.k8s.io/v1/${KINDS[String(c.kind)]}`;
      const meta = record(c.metadata);
      const name = `${opts.namePrefix ?? ''}${String(meta?.name ?? '')}`;
      const body = pointWebhooksAt({ ...c, metadata: { ...meta, name } }, hostPort, ca.certPem);
      try {
        await client.create(path, body);
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.status !== 409) throw err;
        if (opts.replaceExisting === false)
          throw new Error(
            `a ${String(c.kind)} named ${name} exists already: it is not replaced (it may be another's); delete it if it is a leftover of yours`,
            { cause: err },
          );
        const existing = await client.get<KubeObject>(`${path}/${name}`);
        await client.replace(`${path}/${name}`, {
          ...body,
          metadata: { ...record(body.metadata), resourceVersion: existing.metadata?.resourceVersion },
        });
      }
      installed.push(`${String(c.kind)}/${name}`);
    }
    for (const name of opts.conversions ?? []) {
      // a merge patch: `service: null` drops a service reference kustomize's patch may have set
      const clientConfig = {
        url: `https://${hostPort}/convert`,
        caBundle: Buffer.from(ca.certPem).toString('base64'),
        service: null,
      };
      await client.mergePatch(`${CRD_PATH}/${name}`, {
        spec: {
          conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig } },
        },
      });
      converted.push(name);
    }
  } catch (err) {
    // what was installed before the failure goes again: a half-installed set must not call a server never started
    await removeInstalled(client, installed, converted).catch(() => undefined);
    if (ownDir) rmSync(certDir, { recursive: true, force: true });
    throw err;
  } finally {
    client.close();
  }
  return {
    host,
    port,
    bindAddress: hostPort,
    certDir,
    caPem: ca.certPem,
    configurations: installed,
    conversions: converted,
    async uninstall() {
      const c = new KubeClient(authority.restConfig);
      try {
        await removeInstalled(c, installed, converted);
      } finally {
        c.close();
        if (ownDir) rmSync(certDir, { recursive: true, force: true });
      }
    },
  };
}

/** Sets the converted CRDs back to strategy None and deletes the installed configurations (gone already is fine). */
async function removeInstalled(c: KubeClient, installed: string[], converted: string[]): Promise<void> {
  const gone = (err: unknown) => {
    if (!(err instanceof KubeApiError) || err.status !== 404) throw err;
  };
  for (const name of converted) {
    await c
      .mergePatch(`${CRD_PATH}/${name}`, { spec: { conversion: { strategy: 'None', webhook: null } } })
      .catch(gone);
  }
  for (const ref of installed) {
    const [kind, name] = ref.split('/') as [string, string];
    await c.delete(`/apis/admissionregistration.k8s.io/v1/${KINDS[kind]}/${name}`).catch(gone);
  }
}
