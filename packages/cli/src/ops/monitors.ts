/** `ctrlmetrics monitors`: the ServiceMonitors of a namespace, and a plain answer when the CRD is missing. */
import type { KubeClient } from 'ctrlmetrics/client';
import { OpsError } from './errors.js';
import { apiError, isStatus } from './kube.js';

export const MONITORING_GROUP_VERSION = 'monitoring.coreos.com/v1';

/** A ServiceMonitor as listed (only the fields this tool reads are typed). */
export interface ServiceMonitor {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

/** The message for a cluster without the ServiceMonitor CRD. */
export const CRD_MISSING =
  'the ServiceMonitor CRD (servicemonitors.monitoring.coreos.com) is not installed: no Prometheus operator runs in this cluster. ' +
  'Install one (e.g. kube-prometheus), or point a plain Prometheus at the endpoint with: ctrlmetrics prometheus-config --from config/default; ' +
  "on ctrlmetrics' embedded API, start it with --crds prometheus-operator (ctrlmetrics authority or demo)";

/** True when the API serves `monitoring.coreos.com/v1` servicemonitors (i.e. the CRD is installed). */
export async function serviceMonitorCrdInstalled(client: KubeClient): Promise<boolean> {
  try {
    const res = await client.get<{ resources?: Array<{ name: string }> }>(`/apis/${MONITORING_GROUP_VERSION}`, {
      timeoutMs: 15_000,
    });
    return (res.resources ?? []).some((r) => r.name === 'servicemonitors');
  } catch (err) {
    if (isStatus(err, 404)) return false;
    throw apiError(err, 'cannot ask the API which resources it serves', client);
  }
}

/** Lists the ServiceMonitors of `namespace` (all namespaces when undefined); a missing CRD is a {@link OpsError} saying so. */
export async function listServiceMonitors(
  client: KubeClient,
  namespace: string | undefined,
): Promise<ServiceMonitor[]> {
  const path = namespace
    ? `/apis/${MONITORING_GROUP_VERSION}/namespaces/${encodeURIComponent(namespace)}/servicemonitors`
    : `/apis/${MONITORING_GROUP_VERSION}/servicemonitors`;
  try {
    const list = await client.get<{ items?: ServiceMonitor[] }>(path, { timeoutMs: 15_000 });
    return (list.items ?? []).map((i) => ({ apiVersion: MONITORING_GROUP_VERSION, kind: 'ServiceMonitor', ...i }));
  } catch (err) {
    if (isStatus(err, 404) && !(await serviceMonitorCrdInstalled(client))) throw new OpsError(CRD_MISSING);
    throw apiError(err, `cannot list servicemonitors${namespace ? ` in ${namespace}` : ''}`, client);
  }
}
