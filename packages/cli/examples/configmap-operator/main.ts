/**
 * The example operator's entry point, with the flags of kubebuilder's `cmd/main.go`:
 *
 *   node packages/cli/dist/examples/configmap-operator/main.js --kubeconfig ~/.kube/config \
 *     --metrics-bind-address :8443 --health-probe-bind-address :8081 [--leader-elect --leader-election-namespace NS]
 *
 * The identity in the kubeconfig needs: configmaps get/list/watch/create/update/delete and secrets
 * get/list/watch/patch (all namespaces or --namespace), tokenreviews and subjectaccessreviews create (the metrics
 * auth role), and with --leader-elect leases get/create/update in the lease namespace (--leader-election-namespace;
 * in a pod, the pod's namespace by default).
 */
import { parseArgs } from 'node:util';
import { newOperator } from './operator.js';

// Go's flag package accepts `--metrics-secure=false`; node's parseArgs does not for booleans, so take those first
const BOOLEAN_FLAGS = new Set(['leader-elect', 'metrics-secure', 'enable-http2']);
const explicit = new Map<string, boolean>();
const args = process.argv.slice(2).filter((arg) => {
  const m = /^--([a-z0-9-]+)=(true|false)$/.exec(arg);
  if (!m || !BOOLEAN_FLAGS.has(m[1])) return true;
  explicit.set(m[1], m[2] === 'true');
  return false;
});

const { values } = parseArgs({
  args,
  options: {
    kubeconfig: { type: 'string' },
    namespace: { type: 'string' },
    'metrics-bind-address': { type: 'string', default: ':8443' },
    'health-probe-bind-address': { type: 'string', default: ':8081' },
    'leader-elect': { type: 'boolean', default: false },
    'leader-election-namespace': { type: 'string' },
    'metrics-secure': { type: 'boolean', default: true },
    'metrics-cert-path': { type: 'string' },
    'metrics-cert-name': { type: 'string', default: 'tls.crt' },
    'metrics-cert-key': { type: 'string', default: 'tls.key' },
    'enable-http2': { type: 'boolean', default: false },
  },
});

const flag = (name: 'leader-elect' | 'metrics-secure' | 'enable-http2'): boolean => explicit.get(name) ?? values[name];

const mgr = newOperator({
  kubeconfig: values.kubeconfig,
  watchNamespace: values.namespace,
  healthProbeBindAddress: values['health-probe-bind-address'],
  leaderElection: flag('leader-elect'),
  leaderElectionNamespace: values['leader-election-namespace'],
  metrics: {
    bindAddress: values['metrics-bind-address'],
    secureServing: flag('metrics-secure'),
    certDir: values['metrics-cert-path'],
    certName: values['metrics-cert-name'],
    keyName: values['metrics-cert-key'],
    enableHTTP2: flag('enable-http2'),
  },
});

mgr.start().then(
  () => {
    process.exitCode = 0;
  },
  (err: Error) => {
    process.stderr.write(`error: ${err.message}\n`);
    // as kubebuilder's main.go: exit at once (after a lost lease, reconciles may still be running)
    process.exit(1);
  },
);
