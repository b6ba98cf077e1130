/** `ctrlmetrics label-namespace`: `metrics=enabled` on the namespaces whose pods may scrape through the NetworkPolicy. */
import type { KubeClient } from '../kube/client.js';
import { CliError } from '../cli/errors.js';
import { apiError, isStatus } from './kube.js';

/** The label the scaffolded `allow-metrics-traffic` NetworkPolicy selects scraping namespaces by. */
export const METRICS_NAMESPACE_LABEL = { key: 'metrics', value: 'enabled' } as const;

/** Sets the label on one namespace; returns whether it changed anything. */
export async function labelNamespace(client: KubeClient, namespace: string): Promise<'labeled' | 'not labeled'> {
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}`;
  const { key, value } = METRICS_NAMESPACE_LABEL;
  try {
    const ns = await client.get<{ metadata: { labels?: Record<string, string> } }>(path, { timeoutMs: 15_000 });
    if (ns.metadata.labels?.[key] === value) return 'not labeled';
    await client.mergePatch(path, { metadata: { labels: { [key]: value } } }, { timeoutMs: 15_000 });
    return 'labeled';
  } catch (err) {
    if (isStatus(err, 404)) throw new CliError(`namespaces "${namespace}" not found`);
    throw apiError(err, `cannot label namespace ${namespace}`, client);
  }
}
