/**
 * One pass of the sharder over a ring's objects (timebertt/kubernetes-controller-sharding's sharder controller): the
 * objects of each kind are listed as metadata only, page by page, from the API server's watch cache
 * (`resourceVersion=0`) — the sharder keeps no cache of them, and handles each page before it asks for the next —
 * and each whose shard is not the one the hash ring gives is handed over:
 *
 * - a primary object whose shard is still available is **drained**: the drain label asks the shard to let go, which
 *   it does by removing both labels; the webhook then assigns the object again in that same write;
 * - an object without a shard, on an unavailable shard, or of a controlled kind is **moved**: labelled for its new
 *   shard, the drain label removed, in one write. (TKCS clears both labels and lets its webhook assign the object in
 *   that write; the sharder knows the shard the webhook would give, and a write that needs no webhook call costs
 *   the API server half as much when a dead shard's thousands of objects move at once.)
 *
 * A controlled object moves only once its owner has settled on its shard, so that the old shard never reconciles
 * the owner without the child in its cache (TKCS #639). Every write carries the resourceVersion read: an object that
 * changed meanwhile is left for the next pass.
 */
import type { KubeClient } from '../kube/client.js';
import { KubeApiError } from '../kube/client.js';
import type { RESTMapper } from '../kube/restmapper.js';
import type { Logger } from '../util/log.js';
import type { ShardingLabels } from '../controller/sharding.js';
import { DEFAULT_NAMESPACE_SELECTOR, type LabelSelector, type RingResource } from './controllerring.js';
import { objectHashKey, type ObjectMeta, type RingView } from './membership.js';
import { drains, movements } from './metrics.js';

/** client-go's metadata client's Accept header for lists. */
const PARTIAL_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const PAGE = 500;

export interface RebalanceDeps {
  client: KubeClient;
  mapper: RESTMapper;
  labels: ShardingLabels;
  /** Hand-overs in flight at once (TKCS's `concurrentMoves`, default 100). */
  concurrentMoves: number;
  log: Logger;
  signal?: AbortSignal;
}

/** What a pass did. */
export interface RebalanceResult {
  drained: number;
  moved: number;
  /** writes that failed for another reason than a conflict or a deletion (the pass is retried) */
  failed: number;
  /** controlled objects left for a later pass, their owners still being handed over */
  waiting: number;
}

/** A label selector in the API's query syntax. */
export function selectorText(s: LabelSelector): string {
  const parts = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else throw new Error(`namespaceSelector: unknown operator ${JSON.stringify(e.operator)}`);
  }
  return parts.join(',');
}

/** Runs `tasks` with at most `limit` at once. */
async function bounded(tasks: Array<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, lane));
}

/** A kind of the ring as the API serves it. */
interface Listed {
  role: 'main' | 'controlled';
  group: string;
  resource: string;
  kind: string;
  path: string;
  namespaced: boolean;
}

/** The preferred version of an API group (`v1` for the core group). */
async function preferredVersion(client: KubeClient, group: string): Promise<string | undefined> {
  if (group === '') return 'v1';
  try {
    const g = await client.get<{ preferredVersion?: { version?: string } }>(`/apis/${group}`);
    return g.preferredVersion?.version;
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) return undefined;
    throw err;
  }
}

/**
 * The metadata of a collection, one page at a time, each handed to `onPage` before the next is asked for: a pass
 * holds one page of objects, not the ring's, so the sharder's memory does not grow with the objects it shards.
 */
async function forEachPage(
  client: KubeClient,
  path: string,
  onPage: (items: ObjectMeta[]) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let cont: string | undefined;
  do {
    const page = await client.get<{ items?: Array<{ metadata?: ObjectMeta }>; metadata?: { continue?: string } }>(
      path,
      {
        query: { limit: PAGE, resourceVersion: cont ? undefined : '0', continue: cont },
        headers: { Accept: PARTIAL_LIST_ACCEPT },
        signal,
      },
    );
    await onPage((page.items ?? []).flatMap((i) => (i.metadata ? [i.metadata] : [])));
    cont = page.metadata?.continue || undefined;
  } while (cont);
}

/** One pass over the ring in `view`. */
export async function rebalance(name: string, view: RingView, deps: RebalanceDeps): Promise<RebalanceResult> {
  const { client, labels } = deps;
  const result: RebalanceResult = { drained: 0, moved: 0, failed: 0, waiting: 0 };
  const namespaces = new Set(
    (
      await client.get<{ items: Array<{ metadata: { name: string } }> }>('/api/v1/namespaces', {
        query: { labelSelector: selectorText(view.ring.spec?.namespaceSelector ?? DEFAULT_NAMESPACE_SELECTOR) },
        signal: deps.signal,
      })
    ).items.map((n) => n.metadata.name),
  );

  const kinds: Array<RingResource & { role: 'main' | 'controlled' }> = [];
  for (const m of view.ring.spec?.resources ?? []) {
    kinds.push({ group: m.group ?? '', resource: m.resource, role: 'main' });
    for (const c of m.controlledResources ?? [])
      kinds.push({ group: c.group ?? '', resource: c.resource, role: 'controlled' });
  }
  const listed: Listed[] = [];
  for (const k of kinds) {
    const version = await preferredVersion(client, k.group);
    const apiVersion = version && (k.group ? `${k.group}/${version}` : version);
    const mapping = apiVersion ? await deps.mapper.mappingForResource(apiVersion, k.resource) : undefined;
    if (!mapping || !apiVersion) {
      deps.log.info('a kind of the ring is not served: skipped', {
        controllerring: name,
        group: k.group,
        resource: k.resource,
      });
      continue;
    }
    const path = `${k.group ? `/apis/${apiVersion}` : '/api/v1'}/${k.resource}`;
    listed.push({ ...k, kind: mapping.kind, path, namespaced: mapping.namespaced });
  }

  const write = async (l: Listed, meta: ObjectMeta, patch: Record<string, unknown>, counter: typeof drains) => {
    const at = `${l.path.replace(/\/([^/]+)$/, meta.namespace ? `/namespaces/${encodeURIComponent(meta.namespace)}/$1` : '/$1')}/${encodeURIComponent(meta.name!)}`;
    try {
      await deps.client.mergePatch(at, { metadata: { resourceVersion: meta.resourceVersion, labels: patch } });
      counter.labels(name, l.group, l.resource).inc();
      if (counter === drains) result.drained++;
      else result.moved++;
    } catch (err) {
      // changed or deleted since the list: the next pass sees it as it is now
      if (err instanceof KubeApiError && (err.status === 409 || err.status === 404)) return;
      result.failed++;
      deps.log.error('failed to hand an object over', {
        controllerring: name,
        object: at,
        error: (err as Error).message,
      });
    }
  };

  // the primary objects first: a controlled object waits for its owner to settle (the owners not settled are all
  // the pass keeps besides a page)
  const unsettled = new Set<string>();
  for (const role of ['main', 'controlled'] as const) {
    for (const l of listed.filter((x) => x.role === role)) {
      await forEachPage(
        client,
        l.path,
        async (page) => {
          const tasks: Array<() => Promise<void>> = [];
          for (const meta of page) {
            if (l.namespaced && (meta.namespace === undefined || !namespaces.has(meta.namespace))) continue;
            const key = objectHashKey(role, l.group, l.kind, meta);
            if (!key || !meta.name) continue;
            const desired = view.hash.shardFor(key);
            const current = meta.labels?.[labels.shard];
            if (!desired || current === desired) continue;
            if (role === 'main') {
              unsettled.add(key);
              if (current && view.available.includes(current)) {
                if (meta.labels?.[labels.drain] === undefined)
                  tasks.push(() => write(l, meta, { [labels.drain]: 'true' }, drains));
                continue;
              }
            } else if (unsettled.has(key)) {
              result.waiting++;
              continue;
            }
            tasks.push(() => write(l, meta, { [labels.shard]: desired, [labels.drain]: null }, movements));
          }
          await bounded(tasks, deps.concurrentMoves);
        },
        deps.signal,
      );
    }
  }
  return result;
}
