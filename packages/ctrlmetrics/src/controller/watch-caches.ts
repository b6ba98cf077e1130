/**
 * A controller's watch caches by API group, version and kind (controller-runtime keys its cache by GVK): the reads of
 * `ctx.cache`. Two kinds of one name in two groups are two caches; two watches of one kind (other namespaces or
 * selectors) are read as one. A kind named without its apiVersion must be unambiguous, and a kind the controller does
 * not watch is a {@link NotCachedError}, never an `undefined` that would read as "deleted".
 */
import type { WatchCache } from './informers.js';
import type { KubeObject } from './types.js';
import { NotCachedError } from './not-cached.js';

/** A kind with its apiVersion, as `ctx.cache` takes it (`{ apiVersion: 'apps/v1', kind: 'Deployment' }`). */
export interface TypeRef {
  apiVersion: string;
  kind: string;
}

/** The caches of one controller's watches, by `apiVersion/kind`. */
export class WatchCaches {
  private readonly byType = new Map<string, WatchCache[]>();
  private readonly versionsOf = new Map<string, string[]>();

  constructor(
    private readonly controller: string,
    watches: Array<{ spec: TypeRef; cache: WatchCache }>,
  ) {
    for (const { spec, cache } of watches) {
      const key = `${spec.apiVersion}/${spec.kind}`;
      const caches = this.byType.get(key) ?? [];
      if (!caches.includes(cache)) caches.push(cache);
      this.byType.set(key, caches);
      const versions = this.versionsOf.get(spec.kind) ?? [];
      if (!versions.includes(spec.apiVersion)) versions.push(spec.apiVersion);
      this.versionsOf.set(spec.kind, versions);
    }
  }

  /** The caches of a kind; throws when it is not watched, or named ambiguously. */
  cachesOf(type: string | TypeRef): WatchCache[] {
    const ref = typeof type === 'string' ? this.refOf(type) : type;
    const caches = this.byType.get(`${ref.apiVersion}/${ref.kind}`);
    if (!caches) throw this.notCached(`${ref.kind} (${ref.apiVersion})`);
    return caches;
  }

  private refOf(kind: string): TypeRef {
    const versions = this.versionsOf.get(kind);
    if (!versions) throw this.notCached(kind);
    if (versions.length > 1) {
      throw new NotCachedError(
        `controller ${this.controller} watches ${kind} in ${versions.join(' and ')}: name the one to read, ctx.cache.get({ apiVersion: '${versions[0]}', kind: '${kind}' }, namespace, name)`,
      );
    }
    return { apiVersion: versions[0], kind };
  }

  private notCached(what: string): NotCachedError {
    const watched = [...this.byType.keys()].join(', ');
    return new NotCachedError(
      `controller ${this.controller} does not watch ${what}, so ctx.cache does not hold it (it watches ${watched}): read it with ctx.client (from the API), or add a watch`,
    );
  }

  /** The cached object, or undefined when the watched collection does not hold it. */
  get(type: string | TypeRef, key: string): KubeObject | undefined {
    for (const cache of this.cachesOf(type)) {
      const obj = cache.get(key);
      if (obj) return obj;
    }
    return undefined;
  }

  /** Every cached object of the kind (one per object when watches overlap). */
  list(type: string | TypeRef): KubeObject[] {
    const caches = this.cachesOf(type);
    return caches.length === 1 ? caches[0].list() : unique(caches.flatMap((c) => c.list()));
  }

  /** The objects a field index lists for one value. */
  byIndex(type: string | TypeRef, field: string, value: string, namespace: string | undefined): KubeObject[] {
    const caches = this.cachesOf(type);
    return caches.length === 1
      ? caches[0].byIndex(field, value, namespace)
      : unique(caches.flatMap((c) => c.byIndex(field, value, namespace)));
  }
}

/** One object per namespace/name (the first seen). */
function unique(objs: KubeObject[]): KubeObject[] {
  const seen = new Set<string>();
  return objs.filter((o) => {
    const key = `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
