/**
 * timebertt/kubernetes-controller-sharding's `ControllerRing` API (`sharding.timebertt.dev/v1alpha1`, cluster-scoped):
 * a ring's kinds — `spec.resources[]`, each a primary kind (group, resource) with the kinds its objects control
 * (`controlledResources[]`: children found by their controlling ownerReference) — and an optional
 * `spec.namespaceSelector`; its status counts the shards. The same fields and names, so a ring written for that
 * project's sharder works with this one.
 */

/** A kind of a ring, by API group and resource (plural). */
export interface RingResource {
  group: string;
  resource: string;
}

/** A primary kind of a ring and the kinds its objects control. */
export interface RingMainResource extends RingResource {
  controlledResources?: RingResource[];
}

/** A Kubernetes label selector (`matchLabels`, `matchExpressions`). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

/** A ControllerRing. */
export interface ControllerRing {
  apiVersion: 'sharding.timebertt.dev/v1alpha1';
  kind: 'ControllerRing';
  metadata: { name: string; uid?: string; generation?: number; resourceVersion?: string };
  spec?: { resources?: RingMainResource[]; namespaceSelector?: LabelSelector };
  status?: {
    shards?: number;
    availableShards?: number;
    observedGeneration?: number;
    conditions?: Array<Record<string, unknown>>;
  };
}

export const CONTROLLER_RING_API_VERSION = 'sharding.timebertt.dev/v1alpha1';

/** The namespaces a ring's webhook skips unless the ring selects its own (TKCS's default). */
export const DEFAULT_NAMESPACE_SELECTOR: LabelSelector = {
  matchExpressions: [
    { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'sharding-system'] },
  ],
};

const resourceSchema = {
  type: 'object',
  required: ['resource'],
  properties: {
    group: { type: 'string', description: 'The API group of the resource ("" for the core group).' },
    resource: { type: 'string', description: 'The resource (plural).' },
  },
};

/** The CustomResourceDefinition of ControllerRing, to install before the sharder starts. */
export function controllerRingCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'controllerrings.sharding.timebertt.dev' },
    spec: {
      group: 'sharding.timebertt.dev',
      names: {
        kind: 'ControllerRing',
        listKind: 'ControllerRingList',
        plural: 'controllerrings',
        singular: 'controllerring',
      },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type == "Ready")].status' },
            { name: 'Available', type: 'string', jsonPath: '.status.availableShards' },
            { name: 'Shards', type: 'string', jsonPath: '.status.shards' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'A ring of controller shards and the kinds they share out.',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: {
                  type: 'object',
                  properties: {
                    resources: {
                      type: 'array',
                      description: 'The primary kinds of the ring, each with the kinds its objects control.',
                      items: {
                        ...resourceSchema,
                        properties: {
                          ...resourceSchema.properties,
                          controlledResources: { type: 'array', items: resourceSchema },
                        },
                      },
                    },
                    namespaceSelector: {
                      type: 'object',
                      description:
                        'The namespaces whose objects are sharded (default: all but kube-system and sharding-system).',
                      properties: {
                        matchLabels: { type: 'object', additionalProperties: { type: 'string' } },
                        matchExpressions: {
                          type: 'array',
                          items: {
                            type: 'object',
                            required: ['key', 'operator'],
                            properties: {
                              key: { type: 'string' },
                              operator: { type: 'string' },
                              values: { type: 'array', items: { type: 'string' } },
                            },
                          },
                        },
                      },
                    },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    shards: { type: 'integer', format: 'int32' },
                    availableShards: { type: 'integer', format: 'int32' },
                    observedGeneration: { type: 'integer', format: 'int64' },
                    conditions: {
                      type: 'array',
                      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}
