/**
 * A set of informers shared by the controllers of one manager: watches of the same collection and selectors
 * share one list/watch and one cache (like controller-runtime's cache).
 */
import { Informer, type InformerOptions } from '../kube/informer.js';
import type { IndexExtractor } from '../kube/field-index.js';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../util/log.js';
import { collectionPath, resourceOf } from './handlers.js';
import type { KubeObject, WatchSpec } from './types.js';

/** Tuning shared by every informer of a manager (see {@link InformerOptions}). */
export type InformerTuning = Omit<InformerOptions, 'path' | 'labelSelector' | 'fieldSelector' | 'logger' | 'notFoundHint'>;

/** What to do when the API does not serve a watched kind (controller-runtime: install a CRD before Start). */
export function notFoundHint(spec: Pick<WatchSpec, 'apiVersion' | 'kind' | 'resource'>): string {
  const what = `${spec.kind} (${spec.apiVersion}, resource ${resourceOf(spec)})`;
  return spec.apiVersion.includes('/') && !BUILTIN_GROUP.test(spec.apiVersion)
    ? `the API server does not serve ${what}: install the CRD of ${spec.kind} before starting the manager (e.g. make install, or kubectl apply -f config/crd/bases), or correct the watch's apiVersion, kind or resource`
    : `the API server does not serve ${what}: correct the watch's apiVersion, kind or resource (if ${spec.kind} is a custom resource, install its CRD first)`;
}

/** API groups of Kubernetes itself (`apps/v1`, `rbac.authorization.k8s.io/v1`, …): no CRD to install there. */
const BUILTIN_GROUP = /^([a-z0-9-]+|[a-z0-9.-]+\.k8s\.io)\//;

/** Creates and shares informers; starts each on first use. */
export class InformerSet {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  /** The informers that cache a whole collection (no label or field selector), by collection path. */
  private readonly whole = new Map<string, Informer<KubeObject>>();

  private readonly specs = new Map<string, WatchSpec>();
  private readonly indexes: Array<{ apiVersion: string; kind: string; name: string; extract: IndexExtractor<KubeObject> }> = [];

  constructor(
    private readonly client: KubeClient,
    private readonly tuning: InformerTuning = {},
    private readonly logger?: Logger,
  ) {}

  /** The (started) informer for a watch spec. */
  informerFor(spec: WatchSpec): Informer<KubeObject> {
    const path = collectionPath(spec);
    const key = `${path}?l=${spec.labelSelector ?? ''}&f=${spec.fieldSelector ?? ''}`;
    let inf = this.informers.get(key);
    if (!inf) {
      inf = new Informer<KubeObject>(this.client, {
        ...this.tuning,
        path,
        labelSelector: spec.labelSelector,
        fieldSelector: spec.fieldSelector,
        notFoundHint: notFoundHint(spec),
        logger: this.logger,
      });
      this.informers.set(key, inf);
      this.specs.set(key, spec);
      if (!spec.labelSelector && !spec.fieldSelector) this.whole.set(path, inf);
      for (const i of this.indexes) if (i.apiVersion === spec.apiVersion && i.kind === spec.kind) inf.addIndex(i.name, i.extract);
      inf.start();
    }
    return inf;
  }

  /**
   * The synced informer that caches every object of a collection path (e.g. `/api/v1/namespaces/ns/configmaps`):
   * one for exactly that path, or for the same resource in all namespaces. None when only selector-filtered
   * informers (or none) watch it: a cache miss there would not mean "not found".
   */
  wholeCollection(path: string, namespace: string | undefined): Informer<KubeObject> | undefined {
    const candidates = [this.whole.get(path)];
    if (namespace !== undefined) candidates.push(this.whole.get(path.replace(`/namespaces/${encodeURIComponent(namespace)}/`, '/')));
    return candidates.find((i) => i?.synced);
  }

  /** Indexes the objects of a kind in every informer of it, those made so far and later ones. */
  addIndex(target: { apiVersion: string; kind: string }, name: string, extract: IndexExtractor<KubeObject>): void {
    this.indexes.push({ apiVersion: target.apiVersion, kind: target.kind, name, extract });
    for (const [key, inf] of this.informers) if (this.specs.get(key)?.apiVersion === target.apiVersion && this.specs.get(key)?.kind === target.kind) inf.addIndex(name, extract);
  }

  /** Every informer created so far. */
  all(): Informer<KubeObject>[] {
    return [...this.informers.values()];
  }

  /** True when every informer has completed its first list. */
  allSynced(): boolean {
    return this.all().every((i) => i.synced);
  }

  /** Stops every informer. */
  async stop(): Promise<void> {
    await Promise.all(this.all().map((i) => i.stop()));
  }
}
