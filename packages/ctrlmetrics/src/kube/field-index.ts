/**
 * Field indexes of a cache, as client-go's indexers behind controller-runtime's `IndexField`: each object's values
 * for an index (what `extract` returns), so "the objects whose field is X" is answered in O(matches) instead of a
 * scan. Values are kept per namespace too, so a namespaced lookup touches only that namespace's matches.
 */

/** Values of an object for one index (none: the object is not in the index). */
export type IndexExtractor<T> = (obj: T) => string[] | string | undefined;

interface Entry {
  /** The values the object was indexed under, to remove them when it changes. */
  values: string[];
  namespace: string;
}

export class FieldIndex<T> {
  /** value → keys, over all namespaces. */
  private readonly byValue = new Map<string, Set<string>>();
  /** namespace → value → keys. */
  private readonly byNamespace = new Map<string, Map<string, Set<string>>>();
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly name: string,
    private readonly extract: IndexExtractor<T>,
  ) {}

  private static valuesOf<T>(extract: IndexExtractor<T>, obj: T): string[] {
    const v = extract(obj);
    if (v === undefined) return [];
    return [...new Set(Array.isArray(v) ? v : [v])];
  }

  private static add(map: Map<string, Set<string>>, value: string, key: string): void {
    let keys = map.get(value);
    if (!keys) map.set(value, (keys = new Set()));
    keys.add(key);
  }

  private static remove(map: Map<string, Set<string>>, value: string, key: string): void {
    const keys = map.get(value);
    if (!keys) return;
    keys.delete(key);
    if (keys.size === 0) map.delete(value);
  }

  /** Indexes (or re-indexes) the object stored under `key`. */
  set(key: string, obj: T, namespace: string): void {
    this.delete(key);
    const values = FieldIndex.valuesOf(this.extract, obj);
    if (values.length === 0) return;
    this.entries.set(key, { values, namespace });
    let inNamespace = this.byNamespace.get(namespace);
    if (!inNamespace) this.byNamespace.set(namespace, (inNamespace = new Map<string, Set<string>>()));
    for (const v of values) {
      FieldIndex.add(this.byValue, v, key);
      FieldIndex.add(inNamespace, v, key);
    }
  }

  /** Forgets the object stored under `key`. */
  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    const inNamespace = this.byNamespace.get(e.namespace);
    for (const v of e.values) {
      FieldIndex.remove(this.byValue, v, key);
      if (inNamespace) FieldIndex.remove(inNamespace, v, key);
    }
    if (inNamespace?.size === 0) this.byNamespace.delete(e.namespace);
  }

  /** The keys of the objects indexed under `value` (in `namespace`, when given). */
  keys(value: string, namespace?: string): string[] {
    const keys = namespace === undefined ? this.byValue.get(value) : this.byNamespace.get(namespace)?.get(value);
    return [...(keys ?? [])];
  }

  /** Forgets everything. */
  clear(): void {
    this.byValue.clear();
    this.byNamespace.clear();
    this.entries.clear();
  }
}
