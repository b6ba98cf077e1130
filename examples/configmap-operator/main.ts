/**
 * The example operator's entry point, with the flags of kubebuilder's `cmd/main.go`:
 *
 *   node dist/examples/configmap-operator/main.js --kubeconfig ~/.kube/config \
 *     --metrics-bind-address :8443 --health-probe-bind-address :8081 [--leader-elect]
 *
 * The identity in the kubeconfig needs: configmaps get/list/watch/create/update/delete and secrets
 * get/list/watch/patch (all namespaces or --namespace), tokenreviews and subjectaccessreviews create (the metrics
 * auth role), and with --leader-elect leases get/create/update in the lease namespace.
 */
import { parseArgs } from 'node:util';
import { newOperator } from './operator.js';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    namespace: { type: 'string' },
    'metrics-bind-address': { type: 'string', default: '0' },
    'health-probe-bind-address': { type: 'string', default: ':8081' },
    'leader-elect': { type: 'boolean', default: false },
    'metrics-secure': { type: 'boolean', default: true },
    'metrics-cert-path': { type: 'string' },
    'metrics-cert-name': { type: 'string', default: 'tls.crt' },
    'metrics-cert-key': { type: 'string', default: 'tls.key' },
    'enable-http2': { type: 'boolean', default: false },
  },
});

const mgr = newOperator({
  kubeconfig: values.kubeconfig,
  watchNamespace: values.namespace,
  healthProbeBindAddress: values['health-probe-bind-address'],
  leaderElection: values['leader-elect'],
  metrics: {
    bindAddress: values['metrics-bind-address'],
    secureServing: values['metrics-secure'],
    certDir: values['metrics-cert-path'],
    certName: values['metrics-cert-name'],
    keyName: values['metrics-cert-key'],
    enableHTTP2: values['enable-http2'],
  },
});

mgr.start().then(
  () => {
    process.exitCode = 0;
  },
  (err: Error) => {
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 1;
  },
);
