/**
 * Kind → resource from the API server's discovery, as controller-runtime's lazy REST mapper: a group version's
 * resource list is fetched on first use and cached; a kind it does not list is looked up again (a CRD installed
 * since), at most once per `minRefreshMs`, so that a reconcile loop asking for a missing kind does not flood the API.
 */
import { KubeApiError, type KubeClient } from './client.js';
import type { ObjectLike } from './objects.js';
import { CtrlmetricsError } from '../util/errors.js';

/** Where a kind is served. */
export interface ResourceMapping {
  group: string;
  version: string;
  /** Plural resource name, e.g. `deployments`. */
  resource: string;
  kind: string;
  namespaced: boolean;
}

/** The kind is not served in that version (apimachinery's `NoKindMatchError`). */
export class NoKindMatchError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_NO_KIND_MATCH';
  override name = 'NoKindMatchError';
  constructor(
    readonly kind: string,
    readonly apiVersion: string,
  ) {
    super(
      `no matches for kind ${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)}: if it is a custom resource, install its CRD first`,
    );
  }
}

/** Options of a {@link RESTMapper}. */
export interface RESTMapperOptions {
  /** Least time between two discovery fetches of one group version (default 1000 ms). */
  minRefreshMs?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

interface DiscoveredResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

interface Entry {
  at: number;
  /** undefined: the group version is not served. */
  resources: DiscoveredResource[] | undefined;
}

/** Maps kinds to resources from discovery. */
export class RESTMapper {
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry>>();
  private readonly minRefreshMs: number;
  private readonly now: () => number;

  constructor(
    private readonly client: KubeClient,
    opts: RESTMapperOptions = {},
  ) {
    this.minRefreshMs = opts.minRefreshMs ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  /** Where `kind` of `apiVersion` is served; throws {@link NoKindMatchError} when it is not. */
  async mappingFor(apiVersion: string, kind: string): Promise<ResourceMapping> {
    let entry = await this.discover(apiVersion, false);
    let found = entry.resources?.find((r) => r.kind === kind);
    if (!found && this.now() - entry.at >= this.minRefreshMs) {
      entry = await this.discover(apiVersion, true);
      found = entry.resources?.find((r) => r.kind === kind);
    }
    if (!found) throw new NoKindMatchError(kind, apiVersion);
    const i = apiVersion.indexOf('/');
    return {
      group: i < 0 ? '' : apiVersion.slice(0, i),
      version: i < 0 ? apiVersion : apiVersion.slice(i + 1),
      resource: found.name,
      kind,
      namespaced: found.namespaced,
    };
  }

  /**
   * Where a resource of `apiVersion` is served, and its kind and verbs (the way back from a path); undefined when
   * discovery does not list it. Asks discovery again for a resource it missed, as {@link mappingFor} does.
   */
  async mappingForResource(
    apiVersion: string,
    resource: string,
  ): Promise<(ResourceMapping & { verbs: string[] }) | undefined> {
    let entry = await this.discover(apiVersion, false);
    let found = entry.resources?.find((r) => r.name === resource);
    if (!found && this.now() - entry.at >= this.minRefreshMs) {
      entry = await this.discover(apiVersion, true);
      found = entry.resources?.find((r) => r.name === resource);
    }
    if (!found) return undefined;
    const i = apiVersion.indexOf('/');
    return {
      group: i < 0 ? '' : apiVersion.slice(0, i),
      version: i < 0 ? apiVersion : apiVersion.slice(i + 1),
      resource,
      kind: found.kind,
      namespaced: found.namespaced,
      verbs: found.verbs,
    };
  }

  /** The mapping of an object's `apiVersion` and `kind` (both required). */
  mappingOf(obj: ObjectLike): Promise<ResourceMapping> {
    if (!obj.apiVersion || !obj.kind) {
      return Promise.reject(
        new TypeError(
          `the object ${obj.metadata?.name ?? ''} has no apiVersion or kind: set both to map it to its resource`,
        ),
      );
    }
    return this.mappingFor(obj.apiVersion, obj.kind);
  }

  /** Forgets what was discovered (the next lookup fetches again). */
  reset(): void {
    this.cache.clear();
  }

  private discover(apiVersion: string, refresh: boolean): Promise<Entry> {
    const cached = this.cache.get(apiVersion);
    if (cached && !refresh) return Promise.resolve(cached);
    let p = this.inflight.get(apiVersion);
    if (!p) {
      p = this.fetch(apiVersion).finally(() => this.inflight.delete(apiVersion));
      this.inflight.set(apiVersion, p);
    }
    return p;
  }

  private async fetch(apiVersion: string): Promise<Entry> {
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let resources: DiscoveredResource[] | undefined;
    try {
      const list = await this.client.get<{
        resources?: Array<{ name?: string; kind?: string; namespaced?: boolean; verbs?: unknown }>;
      }>(path);
      resources = (list.resources ?? [])
        .filter((r) => typeof r.name === 'string' && !r.name.includes('/') && typeof r.kind === 'string')
        .map((r) => ({
          name: r.name!,
          kind: r.kind!,
          namespaced: r.namespaced === true,
          verbs: Array.isArray(r.verbs) ? r.verbs.filter((v): v is string => typeof v === 'string') : [],
        }));
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
    }
    const entry = { at: this.now(), resources };
    this.cache.set(apiVersion, entry);
    return entry;
  }
}
