/**
 * The registry: a set of collectors, collected together into one sorted {@link MetricsSnapshot}.
 *
 * The global registry also includes prom-client's default registry on every collect, so metrics users create
 * with prom-client's own API appear with no wiring. Family names never collide silently: registering a family
 * whose samples would collide with another's (see {@link claimedNames}) throws; a collision only a collect can
 * show (a prom-client metric created later) leaves the later family out of the exposition and logs it once, and
 * the scrape goes on. The built-in runtime families step aside when the user's prom-client registry already has
 * the same family (e.g. after `collectDefaultMetrics()`).
 */
import { createRequire } from 'node:module';
import type { Registry as PromRegistry } from 'prom-client';
import { claimedNames, type Collector, type FamilyView, type MetricType } from './family.js';
import {
  isPromMetric,
  isPromRegistry,
  promMetricType,
  PromMetricCollector,
  PromRegistryCollector,
  type PromMetricLike,
} from './foreign.js';
import { createLogger } from '../util/log.js';
import { setDefaultMetricRegistry, type MetricRegistry } from './metric.js';
import { DEFAULT_SLICE_LINES, MetricsSnapshot } from './snapshot.js';
import { CtrlmetricsError } from '../util/errors.js';

/** What `register`/`mustRegister` accept: our metrics, custom collectors, prom-client metrics or registries. */
export type Registrable = Collector | PromMetricLike | PromRegistry;

const log = createLogger('metrics');

/** A collector was registered twice, or two collectors produce a family of the same name. */
export class DuplicateMetricError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_DUPLICATE_METRIC';
  override name = 'DuplicateMetricError';
}

/** A collector threw, rejected or did not finish in time; the scrape must answer 500. */
export class MetricsCollectError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_METRICS_COLLECT';
  override name = 'MetricsCollectError';
}

/** Options of {@link Registry}. */
export interface RegistryOptions {
  /** Include prom-client's default registry on every collect (the global registry does). Default false. */
  includePromClientDefault?: boolean;
  /** Default collect deadline in ms (default 10 000, Prometheus's default scrape timeout). */
  timeoutMs?: number;
  /** Lines per rendered chunk (default 4096). */
  sliceLines?: number;
}

/** Options of {@link Registry.collect}. */
export interface CollectOptions {
  /** Give up (reject) after this many ms. */
  timeoutMs?: number;
}

interface Entry {
  collector: Collector;
  label: string;
  /** Built-in family set that gives way to a same-named family of the user's prom-client registry. */
  yields: boolean;
}

function describe(c: Collector): string {
  const names = c.familyNames();
  return names.length === 1
    ? `metric ${names[0]}`
    : `collector of ${names.length ? names.join(', ') : 'no declared families'}`;
}

const requireHere = createRequire(import.meta.url);
let promClientEntry: string | null | undefined;

/**
 * prom-client's default registry, once the application has loaded prom-client (the copy this package resolves);
 * undefined before, when it cannot hold any metric. Looked up in the CommonJS module cache, which `import` of
 * prom-client (a CommonJS package) fills too, so a manager that never uses prom-client never loads it (≈11 MB of
 * resident memory; docs/performance-notes.md, "Memory").
 */
function promDefaultRegistry(): PromRegistry | undefined {
  if (promClientEntry === undefined) {
    try {
      promClientEntry = requireHere.resolve('prom-client');
    } catch {
      promClientEntry = null;
    }
  }
  if (!promClientEntry) return undefined;
  const exports = requireHere.cache[promClientEntry]?.exports as { register?: PromRegistry } | undefined;
  return exports?.register;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A metrics registry (client_golang `prometheus.Registry`). */
export class Registry implements MetricRegistry {
  private readonly entries = new Map<Collector, Entry>();
  private readonly adapters = new WeakMap<object, Collector>();
  private readonly owners = new Map<string, Collector>();
  /** Every name the registered families are known by (see {@link claimedNames}) → the family that claims it. */
  private readonly claims = new Map<string, { collector: Collector; family: string }>();
  private readonly includePromDefault: boolean;
  /** Default registries of other prom-client copies included on every collect, with the label errors name them by. */
  private readonly promCopies = new Map<PromRegistry, string>();
  private readonly timeoutMs: number;
  private readonly sliceLines: number;
  /**
   * Collects still running, shared by the scrapes that overlap them, so a slow collector is not called once more
   * per scrape. One that outlives a collect's deadline (its scrapes have answered 500 already) is abandoned and
   * the next scrape calls the collector anew: a collector that hung once recovers at the next scrape, and one that
   * always hangs leaves one pending call per deadline, not one per scrape.
   */
  private readonly inflight = new Map<Collector, { promise: Promise<FamilyView[]>; startedAt: number }>();
  /** The views the last collect merged, in merge order, and what they merged into (see {@link merge}). */
  private lastViews: FamilyView[] = [];
  private lastMerged: FamilyView[] | undefined;

  constructor(opts: RegistryOptions = {}) {
    this.includePromDefault = opts.includePromClientDefault ?? false;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.sliceLines = opts.sliceLines ?? DEFAULT_SLICE_LINES;
  }

  /**
   * Includes the default registry of another prom-client copy (or of `@prometheus-io/client`) on every collect, as
   * this registry includes the default registry of the copy ctrlmetrics imports. The same registry twice is a no-op.
   * `label` names the copy in errors (e.g. its path and version).
   */
  includePromClientRegistry(reg: PromRegistry, label = 'a prom-client default registry'): void {
    if (!isPromRegistry(reg))
      throw new TypeError(
        'includePromClientRegistry: expected a prom-client Registry (e.g. `register` from prom-client)',
      );
    if ((reg === promDefaultRegistry() && this.includePromDefault) || this.promCopies.has(reg)) return;
    for (const e of this.entries.values()) {
      if (e.collector === this.adapters.get(reg))
        throw new DuplicateMetricError(`${label} is already registered in this registry`);
    }
    this.promCopies.set(reg, label);
  }

  private adapt(x: Registrable): Collector {
    if (isPromRegistry(x)) {
      if ((x === promDefaultRegistry() && this.includePromDefault) || this.promCopies.has(x)) {
        throw new DuplicateMetricError('this prom-client default registry is already included in this registry');
      }
      let a = this.adapters.get(x);
      if (!a) this.adapters.set(x, (a = new PromRegistryCollector(x)));
      return a;
    }
    if (isPromMetric(x)) {
      let a = this.adapters.get(x);
      if (!a) this.adapters.set(x, (a = new PromMetricCollector(x)));
      return a;
    }
    const c = x;
    if (!c || typeof c.familyNames !== 'function' || typeof c.collect !== 'function') {
      throw new TypeError(
        'register: expected a metric, a Collector {familyNames(), collect()}, or a prom-client metric or registry',
      );
    }
    return c;
  }

  private add(x: Registrable, opts: { allowSame: boolean; yields?: boolean }): void {
    const c = this.adapt(x);
    if (this.entries.has(c)) {
      if (opts.allowSame) return;
      throw new DuplicateMetricError(`${describe(c)} is already registered`);
    }
    const names = c.familyNames();
    const types = c.familyTypes?.() ?? [];
    for (const n of names) {
      if (this.owners.has(n))
        throw new DuplicateMetricError(`a metric named ${n} is already registered; metric names must be unique`);
      if (this.includePromDefault && promDefaultRegistry()?.getSingleMetric(n)) {
        throw new DuplicateMetricError(
          `a metric named ${n} is already registered in prom-client's default registry, which this registry includes`,
        );
      }
      for (const [reg, label] of this.promCopies) {
        if (reg.getSingleMetric(n))
          throw new DuplicateMetricError(
            `a metric named ${n} is already registered in ${label}, which this registry includes`,
          );
      }
    }
    if (new Set(names).size !== names.length)
      throw new DuplicateMetricError(`${describe(c)} declares a family name twice`);
    const claimed = this.checkClaims(names, types);
    for (const n of names) this.owners.set(n, c);
    for (const [name, family] of claimed) this.claims.set(name, { collector: c, family });
    this.entries.set(c, { collector: c, label: describe(c), yields: opts.yields ?? false });
  }

  /**
   * The names the new families claim; throws when one of them is claimed already, here or in an included
   * prom-client registry: their samples would collide in the exposition (client_golang finds most of these only
   * when gathering, and some never).
   */
  private checkClaims(names: readonly string[], types: readonly (MetricType | undefined)[]): Map<string, string> {
    const included = new Map<string, string>();
    const registries = this.includedPromRegistries();
    for (const [reg, label] of registries) {
      for (const m of reg.getMetricsAsArray()) {
        const name = (m as unknown as { name: string }).name;
        for (const cl of claimedNames(name, promMetricType(m))) included.set(cl, `${name} in ${label}`);
      }
    }
    const claimed = new Map<string, string>();
    names.forEach((n, i) => {
      for (const cl of claimedNames(n, types[i])) {
        const other = this.claims.get(cl)?.family ?? included.get(cl) ?? claimed.get(cl);
        if (other !== undefined) {
          throw new DuplicateMetricError(
            `metric ${n}${types[i] ? ` (${types[i]})` : ''} collides with the registered ${other}: both would write ${cl}; rename one of them`,
          );
        }
        claimed.set(cl, n);
      }
    });
    return claimed;
  }

  /**
   * Registers collectors. Registering the very same collector again is a no-op; a different collector with a
   * name already taken throws {@link DuplicateMetricError}.
   */
  register(...collectors: Registrable[]): void {
    for (const c of collectors) this.add(c, { allowSame: true });
  }

  /** Registers collectors; throws {@link DuplicateMetricError} on any duplicate, including the same one twice (Go's `MustRegister`). */
  mustRegister(...collectors: Registrable[]): void {
    for (const c of collectors) this.add(c, { allowSame: false });
  }

  /** @internal Registers a built-in family set that steps aside for same-named families of prom-client's default registry. */
  registerBuiltin(collector: Registrable): void {
    this.add(collector, { allowSame: false, yields: true });
  }

  /** Removes a collector; returns whether it was registered. */
  unregister(x: Registrable): boolean {
    let c: Collector;
    try {
      c = this.adapt(x);
    } catch {
      return false;
    }
    if (!this.entries.delete(c)) return false;
    for (const [n, owner] of this.owners) if (owner === c) this.owners.delete(n);
    for (const [n, claim] of this.claims) if (claim.collector === c) this.claims.delete(n);
    return true;
  }

  /**
   * Starts one collector: its families at once when it answers synchronously (our metrics without a `collect`
   * callback: no promise per family per scrape), else a promise, shared with a collect of it still in flight
   * (started less than `deadlineMs` ago). A synchronous throw is returned as the error.
   */
  private collectOne(
    c: Collector,
    deadlineMs: number,
    now: number,
  ): { views: FamilyView[] } | { error: unknown } | Promise<FamilyView[]> {
    const pending = this.inflight.get(c);
    if (pending && now - pending.startedAt < deadlineMs) return pending.promise;
    let result: FamilyView[] | Promise<FamilyView[]>;
    try {
      result = c.collect();
    } catch (error) {
      return { error };
    }
    if (!isThenable(result)) return { views: result };
    const promise = Promise.resolve(result);
    const done = (): void => {
      if (this.inflight.get(c)?.promise === promise) this.inflight.delete(c);
    };
    promise.then(done, done);
    this.inflight.set(c, { promise, startedAt: now });
    return promise;
  }

  /** prom-client's default registry (when included and loaded) and the included copies, with their labels. */
  private includedPromRegistries(): Array<[PromRegistry, string]> {
    const out: Array<[PromRegistry, string]> = [];
    const def = this.includePromDefault ? promDefaultRegistry() : undefined;
    if (def) out.push([def, "prom-client's default registry"]);
    out.push(...this.promCopies);
    return out;
  }

  /** The registered collectors' family names (not including prom-client's default registry). */
  familyNames(): string[] {
    return [...this.owners.keys()].sort();
  }

  /**
   * Runs every collector (with a deadline) and returns the families, sorted by name. Rejects with a
   * {@link MetricsCollectError} naming the collector when one throws or does not finish in time, and when two
   * collectors produce a family of the same name.
   */
  async collect(opts: CollectOptions = {}): Promise<MetricsSnapshot> {
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const entries = [...this.entries.values()];
    const included = this.includedPromRegistries();
    for (const [reg, label] of included) {
      let a = this.adapters.get(reg);
      if (!a) this.adapters.set(reg, (a = new PromRegistryCollector(reg)));
      entries.push({ collector: a, label, yields: false });
    }
    const now = performance.now();
    const settled = new Array<{ entry: Entry; views?: FamilyView[]; error?: unknown }>(entries.length);
    const waiting: Array<Promise<void>> = [];
    const pending = new Set<string>();
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      const r = this.collectOne(entry.collector, timeoutMs, now);
      if (!(r instanceof Promise)) {
        settled[i] = { entry, ...r };
        continue;
      }
      pending.add(entry.label);
      waiting.push(
        r
          .then(
            (views) => void (settled[i] = { entry, views }),
            (error: unknown) => void (settled[i] = { entry, error }),
          )
          .finally(() => pending.delete(entry.label)),
      );
    }
    if (waiting.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(
            new MetricsCollectError(
              `collecting metrics timed out after ${timeoutMs} ms; still running: ${[...pending].join('; ')}`,
            ),
          );
        }, timeoutMs);
      });
      try {
        await Promise.race([Promise.all(waiting), deadline]);
      } finally {
        clearTimeout(timer);
      }
    }
    const errors = settled.filter((r) => 'error' in r).map((r) => `${r.entry.label}: ${messageOf(r.error)}`);
    if (errors.length === 1) throw new MetricsCollectError(`collecting ${errors[0]}`);
    if (errors.length > 1)
      throw new MetricsCollectError(
        `${errors.length} errors occurred while collecting metrics:\n* ${errors.join('\n* ')}`,
      );
    return new MetricsSnapshot(this.merge(settled as Array<{ entry: Entry; views: FamilyView[] }>), this.sliceLines);
  }

  /**
   * {@link mergeFamilies}, skipped when the collectors handed out the very same views as last time (our metrics
   * keep their view until series change): then the result is the same too, and a scrape builds no claims map.
   */
  private merge(results: Array<{ entry: Entry; views: FamilyView[] }>): FamilyView[] {
    const last = this.lastViews;
    let same = this.lastMerged !== undefined;
    let k = 0;
    for (let pass = 0; pass < 2 && same; pass++) {
      for (const { entry, views } of results) {
        if (!!entry.yields !== (pass === 1)) continue;
        for (let j = 0; j < views.length && same; j++) same = last[k++] === views[j];
      }
    }
    if (same && k === last.length) return this.lastMerged!;
    const ordered: FamilyView[] = [];
    for (const pass of [false, true])
      for (const { entry, views } of results) if (!!entry.yields === pass) ordered.push(...views);
    this.lastViews = ordered;
    return (this.lastMerged = mergeFamilies(results));
  }
}

/** Collisions already logged (bounded: one entry per pair of family names, at most this many). */
const loggedCollisions = new Set<string>();
const MAX_LOGGED_COLLISIONS = 1000;

/**
 * Merges the collectors' families into one list sorted by name. Two families that would write the same name (a
 * family twice, a histogram `x` and a gauge `x_count`, a counter `x_total` and a gauge `x` — see
 * {@link claimedNames}) cannot both be exposed: the first one wins (the registered collectors in registration
 * order, then the included prom-client registries; built-in families step aside for the user's), the other is left
 * out and logged once, and the scrape goes on, so one bad metric does not take the whole endpoint down.
 * Registration refuses every collision it can see; what is left here is what only a collect shows (metrics created
 * through prom-client's own API, custom collectors that do not declare their types).
 */
function mergeFamilies(results: Array<{ entry: Entry; views: FamilyView[] }>): FamilyView[] {
  const claims = new Map<string, { view: FamilyView; entry: Entry }>();
  const kept: FamilyView[] = [];
  // the families that step aside go last, so the others win a name
  const ordered = [...results.filter((r) => !r.entry.yields), ...results.filter((r) => r.entry.yields)];
  for (const { entry, views } of ordered) {
    for (const view of views) {
      // a family without series writes nothing, so it collides with nothing
      if (view.units === 0) continue;
      const names = claimedNamesOf(view.name, view.type);
      let clash: { view: FamilyView; entry: Entry } | undefined;
      for (let i = 0; i < names.length && !clash; i++) clash = claims.get(names[i]);
      if (clash) {
        if (!entry.yields) logCollision(view, entry, clash.view, clash.entry);
        continue;
      }
      for (const n of names) claims.set(n, { view, entry });
      kept.push(view);
    }
  }
  return kept.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** {@link claimedNames} by family name and type, kept: a scrape would otherwise build them for every family. */
const claimedNamesCache = new Map<string, Map<MetricType | undefined, readonly string[]>>();
/** Families whose claimed names are kept; past it (a collector inventing names) they are built per collect. */
const MAX_CLAIMED_NAMES_CACHED = 10_000;

function claimedNamesOf(name: string, type: MetricType | undefined): readonly string[] {
  let byType = claimedNamesCache.get(name);
  const hit = byType?.get(type);
  if (hit) return hit;
  const names = claimedNames(name, type);
  if (!byType) {
    if (claimedNamesCache.size >= MAX_CLAIMED_NAMES_CACHED) return names;
    claimedNamesCache.set(name, (byType = new Map<MetricType | undefined, readonly string[]>()));
  }
  byType.set(type, names);
  return names;
}

function isThenable<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

function logCollision(dropped: FamilyView, by: Entry, kept: FamilyView, keptBy: Entry): void {
  const key = `${dropped.name}\u0000${kept.name}`;
  if (loggedCollisions.has(key) || loggedCollisions.size >= MAX_LOGGED_COLLISIONS) return;
  loggedCollisions.add(key);
  log.error(
    'metric family left out of /metrics: its samples would collide with another family; rename or unregister one of them',
    {
      family: `${dropped.type} ${dropped.name} (${by.label})`,
      collidesWith: `${kept.type} ${kept.name} (${keptBy.label})`,
    },
  );
}

/**
 * The global registry: the controller-runtime families, the built-in runtime/REST-client/certwatcher families, the
 * metrics you register, and prom-client's default registry.
 */
export const registry = new Registry({ includePromClientDefault: true });
setDefaultMetricRegistry(registry);

/**
 * Includes the default registry of another prom-client copy (or of `@prometheus-io/client`) in the global
 * registry, for a copy the manager cannot find by itself (e.g. one nested inside another package): pass that
 * copy's `register`. The same registry twice is a no-op.
 */
export function registerPromClientRegistry(reg: PromRegistry, label?: string): void {
  registry.includePromClientRegistry(reg, label);
}

/** Registers in the global registry; the same collector twice is a no-op, a name clash throws. */
export function register(...collectors: Registrable[]): void {
  registry.register(...collectors);
}

/** Registers in the global registry; throws {@link DuplicateMetricError} on any duplicate (Go's `MustRegister`). */
export function mustRegister(...collectors: Registrable[]): void {
  registry.mustRegister(...collectors);
}

/** Removes a collector from the global registry. */
export function unregister(collector: Registrable): boolean {
  return registry.unregister(collector);
}
