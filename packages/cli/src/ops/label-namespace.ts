/** `ctrlmetrics label-namespace`: `metrics=enabled` on the namespaces whose pods may scrape through the NetworkPolicy. */
import type { KubeClient } from 'ctrlmetrics/client';
import { OpsError } from './errors.js';
import { apiError, isStatus } from './kube.js';

/** The label the scaffolded `allow-metrics-traffic` NetworkPolicy selects scraping namespaces by. */
export const METRICS_NAMESPACE_LABEL = { key: 'metrics', value: 'enabled' } as const;

/** As `kubectl label`: replace another value of the label only with `overwrite`; `dryRun`: change nothing. */
export interface LabelOptions {
  overwrite?: boolean;
  dryRun?: boolean;
}

/**
 * Sets the label on one namespace; returns what kubectl would print after `namespace/NAME` (`labeled`,
 * `not labeled`, with ` (dry run)` on a dry run). Another value of the label is kept unless `overwrite`, with
 * kubectl's error: it may belong to someone else's policy.
 */
export async function labelNamespace(client: KubeClient, namespace: string, o: LabelOptions = {}): Promise<string> {
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}`;
  const { key, value } = METRICS_NAMESPACE_LABEL;
  const suffix = o.dryRun ? ' (dry run)' : '';
  try {
    const ns = await client.get<{ metadata: { labels?: Record<string, string>; resourceVersion?: string } }>(path, {
      timeoutMs: 15_000,
    });
    const current = ns.metadata.labels?.[key];
    if (current === value) return `not labeled${suffix}`;
    if (current !== undefined && !o.overwrite)
      throw new OpsError(`'${key}' already has a value (${current}), and --overwrite is false`);
    if (o.dryRun) return `labeled${suffix}`;
    // the resourceVersion read above: a concurrent change of the labels fails (409) instead of being overwritten
    await client.mergePatch(
      path,
      { metadata: { labels: { [key]: value }, resourceVersion: ns.metadata.resourceVersion } },
      { timeoutMs: 15_000 },
    );
    return 'labeled';
  } catch (err) {
    if (err instanceof OpsError) throw err;
    if (isStatus(err, 404)) throw new OpsError(`namespaces "${namespace}" not found`);
    throw apiError(err, `cannot label namespace ${namespace}`, client);
  }
}
