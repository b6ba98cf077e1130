/**
 * CustomResourceDefinitions the authority can install at start (`ctrlmetrics authority --crds …`) so that overlays
 * with the Prometheus operator's ServiceMonitor or cert-manager's Issuer and Certificate enabled apply as they do on
 * a cluster running those operators.
 *
 * Written here from the upstream APIs' facts (group, version, kind and resource names, scope, short names,
 * categories, printer columns, required fields), not copied from the upstream manifests: the schemas declare the
 * fields kubebuilder's scaffold sets and keep every other field (`x-kubernetes-preserve-unknown-fields`), so objects
 * written for the full upstream schema are stored unchanged. For the upstream validation, apply upstream's CRDs
 * instead (each set names its source).
 */
import type { KubeObject } from './types.js';
import { record } from './json.js';

/** One installable set: the CRDs of an upstream project at a pinned version. */
export interface CrdSet {
  /** The upstream project and version whose API the CRDs declare. */
  source: string;
  /** The CustomResourceDefinition objects, as JSON. */
  crds: Array<Record<string, unknown>>;
}

const str = { type: 'string' };
const bool = { type: 'boolean' };
const strings = { type: 'array', items: str };
const open = (properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  'x-kubernetes-preserve-unknown-fields': true,
  properties,
  ...extra,
});
const labelSelector = open({
  matchLabels: { type: 'object', additionalProperties: str },
  matchExpressions: {
    type: 'array',
    items: open({ key: str, operator: str, values: strings }, { required: ['key', 'operator'] }),
  },
});
const secretKey = open({ name: str, key: str, optional: bool }, { required: ['key'] });
const secretOrConfigMap = open({ secret: secretKey, configMap: secretKey });

/** Duration as the Prometheus operator validates it (`30s`, `1m30s`, `0`). */
const PROMETHEUS_DURATION =
  '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$';

function crd(o: {
  group: string;
  kind: string;
  plural: string;
  shortNames?: string[];
  categories: string[];
  scope: 'Namespaced' | 'Cluster';
  source: string;
  schema: Record<string, unknown>;
  printerColumns?: Array<Record<string, unknown>>;
}): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${o.plural}.${o.group}`,
      annotations: {
        'ctrlmetrics.dev/declares': `${o.source} ${o.group}/v1 ${o.kind} (reduced schema; unknown fields kept)`,
      },
    },
    spec: {
      group: o.group,
      names: {
        kind: o.kind,
        listKind: `${o.kind}List`,
        plural: o.plural,
        singular: o.kind.toLowerCase(),
        ...(o.shortNames ? { shortNames: o.shortNames } : {}),
        categories: o.categories,
      },
      scope: o.scope,
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          ...(o.printerColumns ? { additionalPrinterColumns: o.printerColumns } : {}),
          schema: { openAPIV3Schema: o.schema },
        },
      ],
    },
  };
}

const PROMETHEUS_OPERATOR =
  'prometheus-operator v0.84.1 (github.com/prometheus-operator/prometheus-operator, example/prometheus-operator-crd)';
const CERT_MANAGER = 'cert-manager v1.20.2 (github.com/cert-manager/cert-manager, deploy/crds)';

const endpoint = open({
  port: str,
  targetPort: { 'x-kubernetes-int-or-string': true },
  path: str,
  scheme: { type: 'string', enum: ['http', 'https', 'HTTP', 'HTTPS'] },
  interval: { type: 'string', pattern: PROMETHEUS_DURATION },
  scrapeTimeout: { type: 'string', pattern: PROMETHEUS_DURATION },
  bearerTokenFile: str,
  bearerTokenSecret: secretKey,
  authorization: open({ type: str, credentials: secretKey }),
  honorLabels: bool,
  tlsConfig: open({
    serverName: str,
    insecureSkipVerify: bool,
    ca: secretOrConfigMap,
    cert: secretOrConfigMap,
    keySecret: secretKey,
    caFile: str,
    certFile: str,
    keyFile: str,
  }),
});

const ready = '.status.conditions[?(@.type == "Ready")]';
const age = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const issuerSpec = open({
  selfSigned: open({ crlDistributionPoints: strings }),
  ca: open({ secretName: str }, { required: ['secretName'] }),
  acme: open(),
  vault: open(),
  venafi: open(),
});
const issuerColumns = [
  { name: 'Ready', type: 'string', jsonPath: `${ready}.status` },
  { name: 'Status', type: 'string', priority: 1, jsonPath: `${ready}.message` },
  age,
];

/** The sets by the name `--crds` takes. */
export const CRD_SETS: Readonly<Record<string, CrdSet>> = {
  'prometheus-operator': {
    source: PROMETHEUS_OPERATOR,
    crds: [
      crd({
        group: 'monitoring.coreos.com',
        kind: 'ServiceMonitor',
        plural: 'servicemonitors',
        shortNames: ['smon'],
        categories: ['prometheus-operator'],
        scope: 'Namespaced',
        source: 'prometheus-operator v0.84.1',
        schema: open(
          {
            spec: open(
              {
                endpoints: { type: 'array', items: endpoint },
                selector: labelSelector,
                namespaceSelector: open({ any: bool, matchNames: strings }),
                jobLabel: str,
                targetLabels: strings,
                podTargetLabels: strings,
              },
              { required: ['endpoints', 'selector'] },
            ),
            status: open(),
          },
          { required: ['spec'] },
        ),
      }),
    ],
  },
  'cert-manager': {
    source: CERT_MANAGER,
    crds: [
      // Issuer and ClusterIssuer: the same API, namespaced and cluster-wide
      ...(
        [
          ['Issuer', 'issuers', 'Namespaced'],
          ['ClusterIssuer', 'clusterissuers', 'Cluster'],
        ] as const
      ).map(([kind, plural, scope]) =>
        crd({
          group: 'cert-manager.io',
          kind,
          plural,
          categories: ['cert-manager'],
          scope,
          source: 'cert-manager v1.20.2',
          printerColumns: issuerColumns,
          schema: open({ spec: issuerSpec, status: open() }, { required: ['spec'] }),
        }),
      ),
      crd({
        group: 'cert-manager.io',
        kind: 'Certificate',
        plural: 'certificates',
        shortNames: ['cert', 'certs'],
        categories: ['cert-manager'],
        scope: 'Namespaced',
        source: 'cert-manager v1.20.2',
        printerColumns: [
          { name: 'Ready', type: 'string', jsonPath: `${ready}.status` },
          { name: 'Secret', type: 'string', jsonPath: '.spec.secretName' },
          { name: 'Issuer', type: 'string', priority: 1, jsonPath: '.spec.issuerRef.name' },
          { name: 'Status', type: 'string', priority: 1, jsonPath: `${ready}.message` },
          age,
        ],
        schema: open(
          {
            spec: open(
              {
                secretName: str,
                issuerRef: open({ name: str, kind: str, group: str }, { required: ['name'] }),
                dnsNames: strings,
                ipAddresses: strings,
                commonName: str,
                duration: str,
                renewBefore: str,
                isCA: bool,
                usages: strings,
              },
              { required: ['issuerRef', 'secretName'] },
            ),
            status: open(),
          },
          { required: ['spec'] },
        ),
      }),
    ],
  },
};

/** Which set declares `group` (for the hint when an object of a group no CRD serves is applied). */
export function crdSetForGroup(group: string): string | undefined {
  return Object.entries(CRD_SETS).find(([, s]) => s.crds.some((c) => record(c.spec)?.group === group))?.[0];
}
