/**
 * One object of the chart as a Go template that renders, for every combination of the chart's switches, what
 * `kubectl kustomize config/default` renders for the same options. The object is taken as the project renders it
 * with every switch on; for each switch, the same object as rendered with that switch (and what needs it) off tells
 * which of its parts the switch brings: a map key or a list item the switch adds is guarded by `{{- if … }}`, a value
 * it changes gets `{{- else }}` and the other value. A part several switches bring is guarded by all of them.
 *
 * Written by hand: Helm's own chart makers (helmify, kubebuilder's helm plugin) template one fixed layout per kind,
 * while these objects are whatever the project's kustomizations make of them, so the guards are found by comparison.
 */
import { isDeepStrictEqual } from 'node:util';
import { stringify } from 'yaml';
import { ScaffoldError } from './errors.js';

/** The condition of a switch: the value that turns it on, as the template reads it (`.Values.webhook.enable`). */
export type Switch = string;

type Json = unknown;
type JsonMap = Record<string, Json>;

const isMap = (v: Json): v is JsonMap => !!v && typeof v === 'object' && !Array.isArray(v);

/** What the switches do to the parts of one object (keyed by the object's own maps and lists). */
class Guards {
  readonly keys = new WeakMap<JsonMap, Map<string, Set<Switch>>>();
  readonly items = new WeakMap<Json[], Map<number, Set<Switch>>>();
  readonly alternatives = new WeakMap<JsonMap, Map<string, { when: Set<Switch>; otherwise: Json }>>();

  guardKey(map: JsonMap, key: string, sw: Switch): void {
    const byKey = this.keys.get(map) ?? new Map<string, Set<Switch>>();
    this.keys.set(map, byKey);
    byKey.set(key, (byKey.get(key) ?? new Set()).add(sw));
  }

  guardItem(list: Json[], index: number, sw: Switch): void {
    const byIndex = this.items.get(list) ?? new Map<number, Set<Switch>>();
    this.items.set(list, byIndex);
    byIndex.set(index, (byIndex.get(index) ?? new Set()).add(sw));
  }

  alternative(map: JsonMap, key: string, sw: Switch, otherwise: Json, where: string): void {
    const byKey = this.alternatives.get(map) ?? new Map<string, { when: Set<Switch>; otherwise: Json }>();
    this.alternatives.set(map, byKey);
    const known = byKey.get(key);
    if (known && !isDeepStrictEqual(known.otherwise, otherwise))
      throw new ScaffoldError(
        `${where}.${key} takes a different value for each of two options: the chart cannot template it`,
      );
    byKey.set(key, { when: (known?.when ?? new Set()).add(sw), otherwise });
  }
}

/** The name a list item is matched by across renders when it changed inside (a container, a volume). */
const itemName = (v: Json): unknown => (isMap(v) ? v.name : undefined);

/** Records, in `guards`, what `sw` adds to or changes in `on` when compared with `off` (the render without it). */
function compare(on: Json, off: Json, sw: Switch, guards: Guards, where: string): void {
  if (Array.isArray(on) && Array.isArray(off)) {
    const used = new Set<number>();
    const unmatched: number[] = [];
    on.forEach((item, i) => {
      const same = off.findIndex((o, j) => !used.has(j) && isDeepStrictEqual(o, item));
      if (same >= 0) used.add(same);
      else unmatched.push(i);
    });
    const added: number[] = [];
    for (const i of unmatched) {
      const name = itemName(on[i]);
      const sameName =
        name === undefined ? -1 : off.findIndex((o, j) => !used.has(j) && isDeepStrictEqual(itemName(o), name));
      if (sameName >= 0) {
        used.add(sameName);
        compare(on[i], off[sameName], sw, guards, `${where}[${String(name)}]`);
      } else added.push(i);
    }
    // as many unnamed items changed as are left on the other side (a ServiceMonitor's one endpoint): changed in place
    const left = off.map((_, j) => j).filter((j) => !used.has(j));
    if (added.length > 0 && added.length === left.length && added.every((i) => isMap(on[i])))
      added.forEach((i, k) => {
        used.add(left[k]);
        compare(on[i], off[left[k]], sw, guards, `${where}[${i}]`);
      });
    else for (const i of added) guards.guardItem(on, i, sw);
    if (used.size !== off.length)
      throw new ScaffoldError(`${where} has items only when an option is off: the chart cannot template them`);
    return;
  }
  if (isMap(on) && isMap(off)) {
    for (const key of Object.keys(off))
      if (!(key in on))
        throw new ScaffoldError(`${where}.${key} is set only when an option is off: the chart cannot template it`);
    for (const [key, value] of Object.entries(on)) {
      if (!(key in off)) guards.guardKey(on, key, sw);
      else if (isDeepStrictEqual(value, off[key])) continue;
      else if ((Array.isArray(value) && Array.isArray(off[key])) || (isMap(value) && isMap(off[key])))
        compare(value, off[key], sw, guards, `${where}.${key}`);
      else guards.alternative(on, key, sw, off[key], where);
    }
    return;
  }
  throw new ScaffoldError(`${where} changes its type with an option: the chart cannot template it`);
}

/** `a`, or `and a b` for several. */
export function all(switches: Iterable<Switch>): string {
  const s = [...switches].sort();
  return s.length === 1 ? s[0] : `and ${s.join(' ')}`;
}

const MARK = '__CTRLMETRICS_';

/** Builds the template of `on` against the renders without each switch (`undefined`: the object is gone then). */
export function objectTemplate(
  on: JsonMap,
  without: ReadonlyMap<Switch, JsonMap | undefined>,
  kind: string,
): { value: JsonMap; guard: Set<Switch>; finish: (yaml: string) => string } {
  const guards = new Guard();
  const guard = new Set<Switch>();
  for (const [sw, off] of without) {
    if (off === undefined) guard.add(sw);
    else if (!isDeepStrictEqual(on, off)) compare(on, off, sw, guards.g, kind);
  }
  return { value: guards.marked(on), guard, finish: (yaml) => guards.finish(yaml) };
}

/** Puts markers into a copy of the object where guards go, and turns them into template actions in its YAML. */
class Guard {
  readonly g = new Guards();
  private n = 0;
  private readonly conditions = new Map<number, string>();
  private readonly alternativeKeys = new Map<number, string>();

  private mark(condition: string): number {
    this.conditions.set(++this.n, condition);
    return this.n;
  }

  marked(v: Json): JsonMap {
    return this.copy(v) as JsonMap;
  }

  private copy(v: Json): Json {
    if (Array.isArray(v)) {
      const guarded = this.g.items.get(v);
      const out: Json[] = [];
      if (guarded && guarded.size === v.length && v.length > 0) {
        // every item guarded: with all of them off the list is empty, which kustomize writes as []
        const any = [...guarded.values()].map((s) => (s.size === 1 ? all(s) : `(${all(s)})`));
        out.push(`${MARK}EMPTY_${this.mark(any.length === 1 ? `not ${any[0]}` : `not (or ${any.join(' ')})`)}__`);
      }
      v.forEach((item, i) => {
        const when = guarded?.get(i);
        if (!when) return out.push(this.copy(item));
        const n = this.mark(all(when));
        out.push(`${MARK}IF_${n}__`, this.copy(item), `${MARK}END_${n}__`);
      });
      return out;
    }
    if (isMap(v)) {
      const keys = this.g.keys.get(v);
      const alternatives = this.g.alternatives.get(v);
      const out: JsonMap = {};
      for (const [key, value] of Object.entries(v)) {
        const when = keys?.get(key);
        const alt = alternatives?.get(key);
        if (when) {
          const n = this.mark(all(when));
          Object.assign(out, { [`${MARK}IF_${n}__`]: null, [key]: this.copy(value), [`${MARK}END_${n}__`]: null });
        } else if (alt) {
          const n = this.mark(all(alt.when));
          this.alternativeKeys.set(n, key);
          Object.assign(out, {
            [`${MARK}IF_${n}__`]: null,
            [key]: this.copy(value),
            [`${MARK}ELSE_${n}__`]: null,
            [`${MARK}ALT_${n}__`]: this.copy(alt.otherwise),
            [`${MARK}END_${n}__`]: null,
          });
        } else out[key] = this.copy(value);
      }
      return out;
    }
    return v;
  }

  finish(yaml: string): string {
    const line = (what: string) => new RegExp(`^( *)(?:- )?${MARK}${what}_(\\d+)__(?:: null)?$`, 'gm');
    return yaml
      .replace(line('IF'), (_m, indent: string, n: string) => `${indent}{{- if ${this.conditions.get(Number(n))} }}`)
      .replace(line('ELSE'), (_m, indent: string) => `${indent}{{- else }}`)
      .replace(line('END'), (_m, indent: string) => `${indent}{{- end }}`)
      .replace(
        line('EMPTY'),
        (_m, indent: string, n: string) => `${indent}{{- if ${this.conditions.get(Number(n))} }} []{{- end }}`,
      )
      .replace(
        new RegExp(`^( *)${MARK}ALT_(\\d+)__:`, 'gm'),
        (_m, indent: string, n: string) => `${indent}${this.alternativeKeys.get(Number(n))}:`,
      );
  }
}

/** YAML of an object as the chart writes it. */
export const toYaml = (v: Json): string => stringify(v, { indentSeq: false, lineWidth: 0 });
