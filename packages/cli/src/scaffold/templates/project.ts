/** The TypeScript side of a generated project: package.json, tsconfig.json, src/, Dockerfile, README.md. */
import { createHash } from 'node:crypto';
import { HEALTH_PORT, METRICS_CERT_DIR, METRICS_PORT, companionSpec, type ProjectParams } from './params.js';
import { E2E_TEST, TEST_OUT_DIR, projectTestFiles } from './project-test.js';
import { hygieneFiles } from './project-hygiene.js';
import { SHARD_REPLICAS } from './config-sharding.js';

/** Versions of the generated project's dev dependencies (kept equal to this package's own). */
export interface ToolVersions {
  typescript: string;
  typesNode: string;
  eslint: string;
  eslintJs: string;
  typescriptEslint: string;
  prettier: string;
}

/** `<8 hex>.<domain>`, stable per project, like kubebuilder's leader-election ID. */
export function leaderElectionID(p: ProjectParams): string {
  return `${createHash('sha256').update(`${p.projectName}.${p.domain}`).digest('hex').slice(0, 8)}.${p.domain}`;
}

function metricPrefix(p: ProjectParams): string {
  return p.projectName.replace(/-/g, '_');
}

export function projectFiles(p: ProjectParams, tools: ToolVersions): Record<string, string> {
  const packageJson = {
    name: p.projectName,
    version: '0.1.0',
    private: true,
    description: `${p.projectName} Kubernetes operator (scaffolded by ctrlmetrics init)`,
    type: 'module',
    engines: { node: '>=20.19' },
    scripts: {
      build: 'tsc -p tsconfig.json',
      start: 'node dist/main.js',
      // one level of folders under test/ (e2e, controllers, …), expanded by the shell: Node 20 and 24 read it alike
      test: `npm run build && tsc -p test/tsconfig.json && node --test ${TEST_OUT_DIR}/test/*/*.test.js`,
      // kubebuilder's make manifests: the CRDs from the API types under src/, the manager role from +kubebuilder:rbac
      manifests: 'ctrlmetrics generate --crd-paths src --rbac-paths src',
      // kubebuilder's IMG (default controller:latest): the image built, pushed, and set in config/manager for the
      // manifests (kustomize edit set image, which kubectl's kustomize cannot do: the CLI does it)
      'docker-build': 'docker build -t ${IMG:-controller:latest} .',
      'docker-push': 'docker push ${IMG:-controller:latest}',
      // the base images (node:24-slim, distroless nodejs24) are published for these two
      'docker-buildx':
        'docker buildx build --push --platform=${PLATFORMS:-linux/amd64,linux/arm64} --tag ${IMG:-controller:latest} .',
      'build-installer':
        'ctrlmetrics set-image controller=${IMG:-controller:latest} && mkdir -p dist && kubectl kustomize config/default > dist/install.yaml',
      // kubebuilder's make install / uninstall (the CRDs only) and make run (with the webhooks served locally)
      'install-crds': 'kubectl apply -k config/crd',
      'uninstall-crds': 'kubectl delete --ignore-not-found -k config/crd',
      dev: 'ctrlmetrics dev --watch',
      // ESLint and Prettier (eslint.config.js, .prettierrc.json), as kubebuilder's make lint / lint-fix
      lint: 'eslint . && prettier --check .',
      'lint-fix': 'prettier --write . && eslint --fix .',
      deploy: 'ctrlmetrics set-image controller=${IMG:-controller:latest} && kubectl apply -k config/default',
      undeploy: 'kubectl delete --ignore-not-found -k config/default',
    },
    dependencies: { ctrlmetrics: p.ctrlmetricsVersion },
    // the CLI (the scripts' ctrlmetrics command) and the embedded authority of the tests: not in the image
    devDependencies: {
      '@ctrlmetrics/cli': companionSpec(p.ctrlmetricsVersion, '@ctrlmetrics/cli'),
      '@ctrlmetrics/envtest': companionSpec(p.ctrlmetricsVersion, '@ctrlmetrics/envtest'),
      '@eslint/js': tools.eslintJs,
      '@types/node': tools.typesNode,
      eslint: tools.eslint,
      prettier: tools.prettier,
      typescript: tools.typescript,
      'typescript-eslint': tools.typescriptEslint,
    },
  };
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023'],
      types: ['node'],
      outDir: 'dist',
      rootDir: 'src',
      strict: true,
      skipLibCheck: true,
      esModuleInterop: true,
      verbatimModuleSyntax: true,
    },
    include: ['src/**/*.ts'],
  };

  const flags = `/**
 * Command-line flags of the manager, parsed like Go's flag package (\`--name=value\`, \`--name value\`, and
 * \`--bool\` / \`--bool=false\` with Go's boolean forms), so the kustomize patches written for kubebuilder projects
 * apply unchanged; controller-runtime's \`--zap-*\` logging flags included.
 */
import { ZAP_FLAGS, parseGoBool, setZapFlag, type LogOptions } from 'ctrlmetrics/log';

export interface Flags {
  metricsBindAddress: string;
  metricsSecure: boolean;
  metricsCertPath: string;
  metricsCertName: string;
  metricsCertKey: string;
  /** Static authorization rules file (kube-rbac-proxy's layout); empty: every scrape gets a SubjectAccessReview. */
  metricsStaticAuthConfig: string;
  /** CA file whose client certificates identify scrapers (CN user, O groups); empty: bearer tokens only. */
  metricsClientCa: string;
  enableHTTP2: boolean;
  healthProbeBindAddress: string;
  leaderElect: boolean;
  /** Namespace of the leader-election Lease; empty: the pod's namespace (required outside a pod). */
  leaderElectionNamespace: string;
  /** The ControllerRing this manager is a shard of; empty: no sharding. Exclusive with leader election. */
  shardingRing: string;
  /** Directory of the webhook server's certificate (the cert-manager Secret); empty: controller-runtime's default. */
  webhookCertPath: string;
  webhookCertName: string;
  webhookCertKey: string;
  /** Port of the webhook server (all interfaces). */
  webhookPort: string;
  kubeconfig: string;
  /** \`--zap-devel\`, \`--zap-encoder\`, \`--zap-log-level\`, \`--zap-stacktrace-level\`, \`--zap-time-encoding\`. */
  log: LogOptions;
}

const DEFAULTS: Omit<Flags, 'log'> = {
  // On by default (kubebuilder's binary defaults to "0" and only its kustomize patch turns it on: kubebuilder #4229).
  metricsBindAddress: ':${METRICS_PORT}',
  metricsSecure: true,
  metricsCertPath: '',
  metricsCertName: 'tls.crt',
  metricsCertKey: 'tls.key',
  metricsStaticAuthConfig: '',
  metricsClientCa: '',
  enableHTTP2: false,
  healthProbeBindAddress: ':${HEALTH_PORT}',
  leaderElect: false,
  leaderElectionNamespace: '',
  shardingRing: '',
  webhookCertPath: '',
  webhookCertName: 'tls.crt',
  webhookCertKey: 'tls.key',
  webhookPort: '9443',
  kubeconfig: '',
};

const HELP: Record<string, string> = {
  'metrics-bind-address': 'The address the metrics endpoint binds to: :${METRICS_PORT} for HTTPS, :8080 with --metrics-secure=false for HTTP, or 0 to disable it.',
  'metrics-secure': 'Serve metrics over HTTPS with authentication and authorization (TokenReview + SubjectAccessReview). Use --metrics-secure=false for plain HTTP without either.',
  'metrics-cert-path': 'Directory with the metrics server certificate (e.g. the cert-manager Secret mounted by cert_metrics_manager_patch.yaml). Empty: a self-signed certificate.',
  'metrics-cert-name': 'Certificate file name in --metrics-cert-path.',
  'metrics-cert-key': 'Private key file name in --metrics-cert-path.',
  'metrics-static-auth-config': 'File of static authorization rules (kube-rbac-proxy layout: authorization.static) allowing named users or groups without a SubjectAccessReview. Empty: none. Such access follows the file, not RBAC.',
  'metrics-client-ca': 'CA file whose client certificates identify a scraper (CN = user, O = groups) instead of a bearer token; a static rule or RBAC still decides. Empty: bearer tokens only.',
  'enable-http2': 'Enable HTTP/2 for the metrics server (off by default: HTTP/2 Rapid Reset and Stream Cancellation CVEs).',
  'health-probe-bind-address': 'The address the health probe endpoint (/healthz, /readyz) binds to.',
  'leader-elect': 'Enable leader election, so only one replica is active.',
  'leader-election-namespace': "Namespace of the leader-election Lease. Empty: the pod's namespace; outside a pod (running from a terminal) it is required with --leader-elect, e.g. ${p.projectName}-system, where config/rbac/leader_election_role.yaml grants the Lease.",
  'sharding-ring': 'Run as a shard of this ControllerRing (config/sharding): a Lease of its own named after POD_NAME, only the objects the sharder assigns to this pod. Exclusive with --leader-elect. Empty: no sharding.',
  'webhook-cert-path': 'Directory with the webhook server certificate (the cert-manager Secret mounted by manager_webhook_patch.yaml). Empty: <tmp>/k8s-webhook-server/serving-certs. The webhook server starts only when the manager has webhooks.',
  'webhook-cert-name': 'Certificate file name in --webhook-cert-path.',
  'webhook-cert-key': 'Private key file name in --webhook-cert-path.',
  'webhook-port': 'Port the webhook server listens on (the webhook Service targets 9443).',
  kubeconfig: 'Path to a kubeconfig file (default: $KUBECONFIG, the in-cluster config, then ~/.kube/config).',
};

const KEYS: Record<string, keyof Omit<Flags, 'log'>> = {
  'metrics-bind-address': 'metricsBindAddress',
  'metrics-secure': 'metricsSecure',
  'metrics-cert-path': 'metricsCertPath',
  'metrics-cert-name': 'metricsCertName',
  'metrics-cert-key': 'metricsCertKey',
  'metrics-static-auth-config': 'metricsStaticAuthConfig',
  'metrics-client-ca': 'metricsClientCa',
  'enable-http2': 'enableHTTP2',
  'health-probe-bind-address': 'healthProbeBindAddress',
  'leader-elect': 'leaderElect',
  'leader-election-namespace': 'leaderElectionNamespace',
  'sharding-ring': 'shardingRing',
  'webhook-cert-path': 'webhookCertPath',
  'webhook-cert-name': 'webhookCertName',
  'webhook-cert-key': 'webhookCertKey',
  'webhook-port': 'webhookPort',
  kubeconfig: 'kubeconfig',
};

/** Parses argv (without node and the script); throws an Error with a usable message on bad input. */
export function parseFlags(argv: string[]): Flags {
  const flags: Flags = { ...DEFAULTS, log: {} };
  const set = flags as unknown as Record<string, string | boolean>;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      for (const [name, help] of [...Object.entries(HELP), ...Object.entries(ZAP_FLAGS).map(([n, f]) => [n, f.help] as const)]) {
        process.stdout.write(\`  --\${name}\\n      \${help}\\n\`);
      }
      process.exit(0);
    }
    const m = /^--?([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    const zap = m ? ZAP_FLAGS[m[1]!] : undefined;
    if (m && zap) {
      setZapFlag(flags.log, m[1]!, zap.boolean ? m[2] : (m[2] ?? argv[++i]));
      continue;
    }
    const key = m ? KEYS[m[1]!] : undefined;
    if (!m || !key) throw new Error(\`unknown flag \${arg} (run with --help for the list)\`);
    if (typeof DEFAULTS[key] === 'boolean') {
      // Go's flag package: a boolean takes its value only as --name=value (1, t, T, TRUE, true, True, 0, f, F, …)
      const v = parseGoBool(m[2] ?? 'true');
      if (v === undefined) throw new Error(\`invalid boolean value "\${m[2]}" for --\${m[1]}\`);
      set[key] = v;
    } else {
      const v = m[2] ?? argv[++i];
      if (v === undefined) throw new Error(\`flag needs an argument: --\${m[1]}\`);
      set[key] = v;
    }
  }
  return flags;
}
`;

  const main = `/**
 * Entry point of the ${p.projectName} manager: parses the flags, configures the secure metrics endpoint and runs the
 * controllers. Generated by \`ctrlmetrics init\`; yours to edit.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Manager, createLogger, filters } from 'ctrlmetrics';
import { transforms } from 'ctrlmetrics/cache';
import type { WebhookServerOptions } from 'ctrlmetrics/webhook';
import type { MetricsOptions } from 'ctrlmetrics/metrics/server';
import { loadStaticAuthorizationFile } from 'ctrlmetrics/metrics/filters';
import { configureLogging } from 'ctrlmetrics/log';
import { parseFlags, type Flags } from './flags.js';
import { newConfigMapController } from './controllers/configmap-controller.js';
// +ctrlmetrics:scaffold:imports

const setupLog = createLogger('setup');

/** The Metrics options block, wired to the flags. */
export function metricsOptions(flags: Flags): MetricsOptions {
  const options: MetricsOptions = {
    bindAddress: flags.metricsBindAddress,
    secureServing: flags.metricsSecure,
    // If HTTP/2 is enabled the metrics server is exposed to the HTTP/2 Stream Cancellation and Rapid Reset CVEs
    // (GHSA-qppj-fm5r-hxr3, GHSA-4374-p667-p6c8). Off by default: ALPN then offers only http/1.1.
    enableHTTP2: flags.enableHTTP2,
    tlsOpts: [],
  };
  // Authentication (TokenReview) and authorization (SubjectAccessReview) of every scrape. The manager's
  // ServiceAccount needs config/rbac/metrics_auth_role.yaml; scrapers need the ClusterRole metrics-reader.
  if (flags.metricsSecure && flags.metricsClientCa) {
    // scrapers without a service-account token (a sidecar, another cluster's Prometheus) present a certificate
    options.clientCAFile = flags.metricsClientCa;
  }
  if (flags.metricsSecure) {
    options.filterProvider = flags.metricsStaticAuthConfig
      ? // rules that allow their users without a SubjectAccessReview (the token is still reviewed)
        filters.authenticationAndAuthorization({ staticAuthorization: loadStaticAuthorizationFile(flags.metricsStaticAuthConfig) })
      : filters.withAuthenticationAndAuthorization;
  }
  // Without --metrics-cert-path a self-signed certificate is generated: fine for development, not for production,
  // where Prometheus should verify the server ([METRICS-WITH-CERTS] and [PROMETHEUS-WITH-CERTS] in config/,
  // or \`ctrlmetrics edit --enable metrics-tls\`).
  if (flags.metricsCertPath) {
    const missing = [flags.metricsCertName, flags.metricsCertKey]
      .map((f) => join(flags.metricsCertPath, f))
      .filter((f) => !existsSync(f));
    if (missing.length > 0) {
      // Fail loudly instead of silently serving a self-signed certificate (a kubebuilder trap).
      throw new Error(
        \`--metrics-cert-path \${flags.metricsCertPath}: missing \${missing.join(', ')}; mount the certificate Secret (${METRICS_CERT_DIR} in the Deployment) or drop the flag\`,
      );
    }
    setupLog.info('using the provided metrics certificates', { certDir: flags.metricsCertPath });
    options.certDir = flags.metricsCertPath;
    options.certName = flags.metricsCertName;
    options.keyName = flags.metricsCertKey;
  }
  return options;
}

/** The webhook server's options (it starts only when webhooks are added), wired to the flags. */
export function webhookOptions(flags: Flags): WebhookServerOptions {
  if (!/^\\d+$/.test(flags.webhookPort) || Number(flags.webhookPort) > 65535) throw new Error(\`invalid --webhook-port \${flags.webhookPort}: a port number\`);
  return {
    bindAddress: \`:\${flags.webhookPort}\`,
    // the same HTTP/2 choice as the metrics server
    enableHTTP2: flags.enableHTTP2,
    ...(flags.webhookCertPath ? { certDir: flags.webhookCertPath, certName: flags.webhookCertName, keyName: flags.webhookCertKey } : {}),
  };
}

/** The flags, or exit 2 with the problem on stderr, as Go's flag package does. */
function flagsOrExit(): Flags {
  try {
    return parseFlags(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(\`\${err instanceof Error ? err.message : String(err)}\\n\`);
    process.exit(2);
  }
}

async function run(): Promise<void> {
  const flags = flagsOrExit();
  // zap's defaults as controller-runtime applies them: JSON at info level, console on a terminal or with --zap-devel
  configureLogging(flags.log);
  // the configuration is loaded here: an unreadable kubeconfig fails before anything starts
  const mgr = await Manager.create({
    metrics: metricsOptions(flags),
    webhook: webhookOptions(flags),
    // cached objects without metadata.managedFields (often half an object): reconcilers do not read them
    cache: { defaultTransform: transforms.stripManagedFields },
    healthProbeBindAddress: flags.healthProbeBindAddress,
    leaderElection: flags.leaderElect,
    leaderElectionID: '${leaderElectionID(p)}',
    ...(flags.leaderElectionNamespace ? { leaderElectionNamespace: flags.leaderElectionNamespace } : {}),
    // a shard of a ring (ctrlmetrics edit --enable sharding): its Lease is in the leader-election namespace
    ...(flags.shardingRing ? { sharding: { ring: flags.shardingRing } } : {}),
    ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
    logger: createLogger('manager'),
  });
  mgr.add(newConfigMapController());
  // +ctrlmetrics:scaffold:controllers

  // The manager stops gracefully on SIGTERM/SIGINT (a second signal exits at once).
  setupLog.info('starting manager');
  await mgr.start();
}

run().catch((err: unknown) => {
  setupLog.error('problem running manager', { error: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
`;

  const controller = `/**
 * Sample controller: reconciles the ConfigMaps labelled app.kubernetes.io/part-of=${p.projectName} and reports the
 * number of data keys of each in a custom metric, served on /metrics next to the controller-runtime metrics. Replace
 * it with your own (and adjust config/rbac/role.yaml), or remove it.
 *
 * The label selector keeps it scoped: the informer caches only those ConfigMaps (the API server filters them), and
 * the gauge has a series for each of those alone. Without it, a cluster's every ConfigMap would be cached and
 * exported as a series.
 */
import { Controller, metrics, type KubeObject } from 'ctrlmetrics';

// \`npm run manifests\` writes config/rbac/role.yaml from these markers (kubebuilder's make manifests).
// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list;watch

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** The ConfigMaps this controller reconciles. */
export const SAMPLE_SELECTOR = 'app.kubernetes.io/part-of=${p.projectName}';

/** Custom metrics register in the global registry (like controller-runtime's metrics.Registry). */
const configMapKeys = new metrics.Gauge({
  name: '${metricPrefix(p)}_configmap_keys',
  help: 'Number of data keys of each reconciled ConfigMap',
  labelNames: ['namespace', 'name'],
});

export function newConfigMapController(): Controller {
  return new Controller({
    name: 'configmap',
    maxConcurrentReconciles: 1,
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', labelSelector: SAMPLE_SELECTOR }],
    reconciler: async (req, ctx) => {
      const namespace = req.namespace ?? '';
      // read from the informer cache: no API call per reconcile
      const cm = ctx.cache.get<ConfigMap>('ConfigMap', req.namespace, req.name);
      if (!cm) {
        configMapKeys.remove(namespace, req.name);
        return;
      }
      configMapKeys.labels(namespace, req.name).set(Object.keys(cm.data ?? {}).length);
      ctx.log.debug('reconciled', { namespace, name: req.name });
    },
  });
}
`;

  // A vendored ctrlmetrics (`file:vendor/…`) is part of what `npm ci` reads, so it is copied before it runs.
  const vendored = p.ctrlmetricsVersion.startsWith('file:vendor/');
  const dockerfile = `# syntax=docker/dockerfile:1
# Build the manager on Node 24 LTS, then run it on a distroless, non-root Node 24 image.
FROM node:24-slim AS builder
WORKDIR /app
# Everything npm ci reads: the manifest, the lock file, npm settings${vendored ? ' and the vendored ctrlmetrics packages' : ''}.
COPY package.json package-lock.json* .npmrc* ./
${vendored ? 'COPY vendor ./vendor\n' : ''}RUN if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# gcr.io/distroless/nodejs24-debian12:nonroot runs as uid 65532 with no shell or package manager.
FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
COPY --from=builder /app/package.json ./
COPY --from=builder /app/node_modules ./node_modules
COPY --from=builder /app/dist ./dist
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node", "/app/dist/main.js"]
`;

  const readme = `# ${p.projectName}

A Kubernetes operator written in TypeScript on [ctrlmetrics](https://www.npmjs.com/package/ctrlmetrics), scaffolded by
\`ctrlmetrics init\`. Its layout follows kubebuilder v4, so its \`config/\` directory and section markers
(\`[METRICS]\`, \`[PROMETHEUS]\`, \`[METRICS-WITH-CERTS]\`, \`[PROMETHEUS-WITH-CERTS]\`, \`[CERTMANAGER]\`, \`[NETWORK POLICY]\`)
will look familiar.

## Build and run

\`\`\`sh
npm install
npm test                                          # builds, then test/e2e against ctrlmetrics' embedded authority
npm run lint                                      # ESLint and Prettier's check (npm run lint-fix applies fixes)
npm run dev                                       # ctrlmetrics dev --watch: the manager from here against $KUBECONFIG (below)
USE_EXISTING_CLUSTER=true npm test                # the controller and webhook tests on that cluster
export IMG=example.com/${p.projectName}:v0.0.1        # the image (default controller:latest)
npm run docker-build && npm run docker-push       # docker build and push of the Dockerfile (docker-buildx: PLATFORMS)
npm run build-installer                           # dist/install.yaml: config/default in one file, with $IMG
npm run deploy                                    # $IMG set in config/manager, then kubectl apply -k config/default
npx ctrlmetrics edit --enable helm                # a Helm chart in dist/chart/ made from config/default (generate helm refreshes it)
\`\`\`

${
  vendored
    ? `\`vendor/\` holds the ctrlmetrics packages \`ctrlmetrics init\` ran from (\`${p.ctrlmetricsVersion}\` and the
\`@ctrlmetrics/envtest\` and \`@ctrlmetrics/cli\` beside it): commit it, the Dockerfile copies it before \`npm ci\`. To take
them from the registry instead, \`npm install ctrlmetrics@<version>\` and
\`npm install -D @ctrlmetrics/envtest@<version> @ctrlmetrics/cli@<version>\`, then delete \`vendor/\` and the
Dockerfile's \`COPY vendor\` line.

`
    : ''
}\`npm test\` (\`${E2E_TEST}\`) works like kubebuilder's scaffolded e2e test, with ctrlmetrics' embedded authority
in place of a cluster: it applies the namespace and RBAC of \`config/\` (without the kustomize name prefix), runs
\`dist/main.js\` as the manager's service account, grants a scraper the reader role (\`ctrlmetrics grant\`), takes its
token (\`ctrlmetrics token\`) and scrapes \`/metrics\`: 200 with the reconcile metrics, 401 without a token, 403 without
the role. With \`USE_EXISTING_CLUSTER=true\` (envtest's switch) the controller and webhook tests run on the cluster of
\`KUBECONFIG\` instead: the CRDs and webhook configurations are installed there and removed after.

\`npm run dev\` (\`ctrlmetrics dev --watch\`) runs the manager from your terminal against the cluster of \`KUBECONFIG\`: it builds, applies
the CRDs and the metrics reader role (as kubebuilder's \`make install\`, which is \`npm run install-crds\` here; they stay), points the webhook configurations
of \`config/webhook\` at a webhook server on this machine with a fresh CA (once it has checked the API server reaches
it: a local cluster; \`--webhook-host\` gives another address), runs \`dist/main.js\` with that certificate, restarts
it when \`src/\` changes (\`--watch\`), and on Ctrl-C removes the webhook configurations again. Without webhooks, or
with \`ENABLE_WEBHOOKS=false\`, \`node dist/main.js --kubeconfig ~/.kube/config\` runs the manager as it is.

## Metrics endpoint

The manager serves \`/metrics\` on \`:${METRICS_PORT}\` over HTTPS by default (\`--metrics-bind-address=0\` disables it).
Every request needs a bearer token: the manager checks it with a TokenReview and asks a SubjectAccessReview whether
its user may \`get\` the non-resource URL \`/metrics\`. Missing or invalid token: 401; not allowed: 403.

- The manager's ServiceAccount is bound to \`${p.projectName}-metrics-auth-role\` (create TokenReviews and SubjectAccessReviews).
- Scrapers need \`${p.projectName}-metrics-reader\`. Nothing binds it by default; bind it to your Prometheus service account:
  \`kubectl create clusterrolebinding ${p.projectName}-metrics-binding --clusterrole=${p.projectName}-metrics-reader --serviceaccount=<ns>:<sa>\`
  (or \`ctrlmetrics grant --serviceaccount <ns>:<sa>\`).

Flags: \`--metrics-bind-address\` (\`:${METRICS_PORT}\`), \`--metrics-secure\` (true), \`--metrics-cert-path\`, \`--metrics-cert-name\`
(\`tls.crt\`), \`--metrics-cert-key\` (\`tls.key\`), \`--metrics-static-auth-config\` (a file of static authorization rules,
kube-rbac-proxy's layout: the users it names are allowed without a SubjectAccessReview), \`--metrics-client-ca\` (a CA
file: client certificates it signed identify scrapers by CN and O), \`--enable-http2\` (false),
\`--health-probe-bind-address\` (\`:${HEALTH_PORT}\`),
\`--leader-elect\`, \`--leader-election-namespace\` (the pod's namespace; outside a pod it is required with
\`--leader-elect\`: \`${p.projectName}-system\`), and controller-runtime's logging flags \`--zap-log-level\` (\`debug\`, \`info\`, \`error\`, \`panic\` or an
integer > 0), \`--zap-devel\`, \`--zap-encoder\` (\`json\` | \`console\`; console is the default on a terminal),
\`--zap-stacktrace-level\`, \`--zap-time-encoding\`. Booleans take Go's forms (\`--leader-elect=True\`). A bad flag exits 2
with the problem on stderr. When \`--metrics-cert-path\` is given but the files are missing, the manager exits with an error
instead of silently serving a self-signed certificate. \`--metrics-secure=false\` serves plain HTTP with no
authentication on the same port: set the ServiceMonitor's \`scheme: http\` (and drop its \`tlsConfig\`) if you do that.

## Optional parts

Switch them with \`ctrlmetrics edit --enable|--disable <option>\`, which keeps your own edits and comments:

| option | what it does |
|---|---|
| \`prometheus\` | ServiceMonitor \`${p.projectName}-controller-manager-metrics-monitor\` (Prometheus Operator). Uses \`insecureSkipVerify: true\` until \`metrics-tls\` is on. |
| \`certmanager\` | Self-signed Issuer and Certificate \`metrics-certs\` (Secret \`metrics-server-cert\`) with DNS names \`<service>.<namespace>.svc\` and \`<service>.<namespace>.svc.cluster.local\`. Needs cert-manager. |
| \`metrics-tls\` | The manager serves the cert-manager certificate and the ServiceMonitor verifies it (\`serverName\`, CA from the Secret). Turns on \`prometheus\` and \`certmanager\` too. |
| \`network-policy\` | NetworkPolicy: only pods in namespaces labelled \`metrics: enabled\` may reach port ${METRICS_PORT}. |
| \`grafana\` | ConfigMap with Grafana dashboards for the controller-runtime metrics (\`config/grafana/*.json\`). |
| \`sharding\` | The manager as ${SHARD_REPLICAS} shards of a ring, each reconciling its share of the objects (\`--sharding-ring\`, \`POD_NAME\`, no leader election), and the sharder (\`src/sharder.ts\`, from the same image) that assigns them, with its Service, certificate, RBAC and the ControllerRing CRD (\`config/sharding\`). The sample's ring takes the ConfigMaps of namespaces labelled \`sharding.ctrlmetrics.io/${p.projectName}=enabled\`; list your kinds in \`src/sharder.ts\` and \`config/sharding/rbac.yaml\`. Turns on \`certmanager\` too; \`test/e2e/sharding.test.ts\` runs two shards and the sharder on the authority. |

## NetworkPolicy caveats

- A NetworkPolicy limits addresses and ports; it authenticates nobody. Any pod in a namespace labelled
  \`metrics: enabled\` can connect, and the token check above is still what protects \`/metrics\`. Label the
  namespace your Prometheus runs in: \`kubectl label namespace <ns> metrics=enabled\`.
- NetworkPolicies are only enforced when the cluster's network plugin (CNI) supports them; otherwise they are
  silently ignored.
- \`config/network-policy/allow-webhook-traffic.yaml\` (for when you add webhooks) allows the webhook pod port 9443 from
  all sources, because the API server calls webhooks through the webhook Service and a \`namespaceSelector\` cannot
  match the API server. A \`namespaceSelector\` on a webhook configuration restricts which objects' admission requests
  are sent to the webhook, not network traffic.
`;

  return {
    'package.json': JSON.stringify(packageJson, null, 2) + '\n',
    'tsconfig.json': JSON.stringify(tsconfig, null, 2) + '\n',
    'src/flags.ts': flags,
    'src/main.ts': main,
    'src/controllers/configmap-controller.ts': controller,
    Dockerfile: dockerfile,
    '.dockerignore': `node_modules/\ndist/\n${TEST_OUT_DIR}/\n.git/\n`,
    // dist/ is the build, but for the Helm chart (ctrlmetrics generate helm), which is committed
    '.gitignore': `node_modules/\n/dist/*\n!/dist/chart/\n${TEST_OUT_DIR}/\n`,
    ...projectTestFiles(p),
    ...hygieneFiles(),
    'README.md': readme,
  };
}
