/**
 * `ctrlmetrics generate types --from <crd.yaml…>`: TypeScript types from CustomResourceDefinitions, for kinds another
 * project defines (cert-manager's Certificate, prometheus-operator's ServiceMonitor): one file per served version,
 * `<out>/<group>/<version>/<kind>-types.ts`, with the kind's interface and one interface per nested object schema
 * (named by its path: `CertificateSpecPrivateKey`), the kind's apiVersion/kind constant, and its entry in the
 * library's `KnownKinds`, so `get('cert-manager.io/v1', 'Certificate', key)` is typed.
 *
 * From the structural schema: `required` makes a field non-optional; `enum` a union of its literals;
 * `x-kubernetes-int-or-string` (quantities, ports) `number | string`; `nullable` adds `| null`;
 * `x-kubernetes-preserve-unknown-fields` an open record (`[key: string]: unknown` beside declared properties);
 * `additionalProperties` a `Record`; `x-kubernetes-embedded-resource` a `KubeObject`; descriptions become TSDoc,
 * with the default and the format noted. The output depends only on the CRDs given: the same input writes the same
 * bytes. A document that is not a CRD, or a schema with no type to give, is an error naming the file, the line and
 * the schema's path. The files carry `+kubebuilder:skip`: no CRD is generated from another project's types.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { LineCounter, isMap, isScalar, isSeq, parseAllDocuments, type Document } from 'yaml';
import { CtrlmetricsError } from 'ctrlmetrics/internal';

/** A CRD that cannot be typed: the message names the file, the line and the schema's path. */
export class TypesError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_TYPES';
  override name = 'TypesError';
}

/** One generated file: its path (relative to the output directory) and text. */
export interface GeneratedTypes {
  path: string;
  text: string;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `FirstMate` → `FIRST_MATE`. */
function constantName(kind: string): string {
  return kind
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toUpperCase();
}

/** `private-key` / `privateKey` → `PrivateKey`. */
function pascal(s: string): string {
  return s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((p) => p[0].toUpperCase() + p.slice(1))
    .join('');
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const propertyName = (k: string) => (IDENTIFIER.test(k) ? k : JSON.stringify(k));

/** A TSDoc block from a schema's description, default and format; `''` when there is nothing to say. */
function doc(s: Json, indent: string): string {
  const lines: string[] = [];
  if (typeof s.description === 'string' && s.description.trim()) lines.push(...s.description.trim().split('\n'));
  if (typeof s.format === 'string' && s.format) lines.push(`Format: ${s.format}.`);
  if (s.default !== undefined) lines.push(`@defaultValue \`${JSON.stringify(s.default)}\``);
  if (!lines.length) return '';
  // a description must not end the comment early
  const safe = lines.map((l) => l.replaceAll('*/', '*\\/').trimEnd());
  return `${indent}/**\n${safe.map((l) => `${indent} *${l ? ` ${l}` : ''}`).join('\n')}\n${indent} */\n`;
}

/** Where a schema node is, for errors: `file:line`, from the YAML node at `path`. */
type Locate = (path: Array<string | number>) => string;

class Emitter {
  /** Interfaces in the order they were first reached (root first). */
  readonly interfaces: string[] = [];
  private readonly names = new Set<string>();
  usesKubeObject = false;

  constructor(
    private readonly locate: Locate,
    private readonly schemaPath: Array<string | number>,
  ) {}

  private fail(at: Array<string | number>, message: string): never {
    const full = [...this.schemaPath, ...at];
    const path = full
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
      .join('')
      .replace(/^\./, '');
    throw new TypesError(`${this.locate(full)}: ${path}: ${message}`);
  }

  /** A name for a nested interface, unique in the file (a suffix number when two paths give the same name). */
  private nameFor(wanted: string): string {
    let name = wanted;
    for (let i = 2; this.names.has(name); i++) name = `${wanted}${i}`;
    this.names.add(name);
    return name;
  }

  /** The TypeScript type of a schema; nested object schemas become interfaces named `name`. */
  typeOf(s: unknown, at: Array<string | number>, name: string): string {
    if (!isObj(s)) this.fail(at, 'is not a schema (an object with a type)');
    const t = this.baseType(s, at, name);
    return s.nullable === true ? `${t} | null` : t;
  }

  private baseType(s: Json, at: Array<string | number>, name: string): string {
    if (s['x-kubernetes-int-or-string'] === true) return 'number | string';
    if (s['x-kubernetes-embedded-resource'] === true) {
      this.usesKubeObject = true;
      return 'KubeObject';
    }
    const literals = (kind: 'string' | 'number') => {
      if (!Array.isArray(s.enum)) return undefined;
      const ok = s.enum.every((v) => typeof v === kind || v === null);
      if (!ok) this.fail([...at, 'enum'], `holds values that are not ${kind}s`);
      return (
        s.enum
          .filter((v) => v !== null)
          .map((v) => JSON.stringify(v))
          .join(' | ') || undefined
      );
    };
    switch (s.type) {
      case 'string':
        return literals('string') ?? 'string';
      case 'integer':
      case 'number':
        return literals('number') ?? 'number';
      case 'boolean':
        return 'boolean';
      case 'array': {
        if (!isObj(s.items)) this.fail(at, 'is an array without items: give its items a schema');
        const item = this.typeOf(s.items, [...at, 'items'], name.endsWith('s') ? name.slice(0, -1) : `${name}Item`);
        return `Array<${item}>`;
      }
      case 'object':
      case undefined:
        return this.objectType(s, at, name);
      default:
        return this.fail(
          [...at, 'type'],
          `type ${JSON.stringify(s.type)} is not one of string, integer, number, boolean, array, object`,
        );
    }
  }

  private objectType(s: Json, at: Array<string | number>, name: string): string {
    const open = s['x-kubernetes-preserve-unknown-fields'] === true;
    const props = isObj(s.properties) ? s.properties : undefined;
    if (props && Object.keys(props).length)
      return this.emitInterface(s, props, at, name, open || s.additionalProperties === true);
    if (isObj(s.additionalProperties))
      return `Record<string, ${this.typeOf(s.additionalProperties, [...at, 'additionalProperties'], `${name}Value`)}>`;
    if (s.type === 'object' || open || s.additionalProperties === true) return 'Record<string, unknown>';
    return this.fail(
      at,
      'has no type: a structural schema gives every field one (or x-kubernetes-preserve-unknown-fields, or x-kubernetes-int-or-string)',
    );
  }

  /** An interface for an object schema with properties; answers its name. */
  emitInterface(
    s: Json,
    props: Json,
    at: Array<string | number>,
    wanted: string,
    open: boolean,
    head: string[] = [],
    skip: string[] = [],
  ): string {
    const name = this.nameFor(wanted);
    const slot = this.interfaces.length;
    this.interfaces.push(''); // keeps the parent before its children
    const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
    const fields = [...head];
    for (const [k, v] of Object.entries(props)) {
      if (skip.includes(k)) continue;
      const type = this.typeOf(v, [...at, 'properties', k], `${name}${pascal(k)}`);
      fields.push(`${isObj(v) ? doc(v, '  ') : ''}  ${propertyName(k)}${required.has(k) ? '' : '?'}: ${type};`);
    }
    if (open)
      fields.push(
        '  /** Fields the schema keeps without declaring them (x-kubernetes-preserve-unknown-fields). */\n  [key: string]: unknown;',
      );
    this.interfaces[slot] = `${doc(s, '')}export interface ${name} {\n${fields.join('\n')}\n}\n`;
    return name;
  }
}

/** The types of one served version of a CRD. */
function typesOfVersion(crd: Json, versionIndex: number, locate: Locate, source: string): GeneratedTypes {
  const spec = crd.spec as Json;
  const group = String(spec.group);
  const names = spec.names as Json;
  const kind = String(names.kind);
  const version = (spec.versions as Json[])[versionIndex];
  const v = String(version.name);
  const schemaPath: Array<string | number> = ['spec', 'versions', versionIndex, 'schema', 'openAPIV3Schema'];
  const schema = isObj(version.schema) ? version.schema.openAPIV3Schema : undefined;
  if (!isObj(schema))
    throw new TypesError(
      `${locate(['spec', 'versions', versionIndex])}: spec.versions[${versionIndex}] (${v}) has no schema.openAPIV3Schema to read types from`,
    );
  const e = new Emitter(locate, schemaPath);
  const apiVersion = `${group}/${v}`;
  const c = constantName(kind);
  const head = [`  apiVersion: typeof ${c}.apiVersion;`, `  kind: typeof ${c}.kind;`, '  metadata: ObjectMeta;'];
  const props = isObj(schema.properties) ? schema.properties : {};
  e.emitInterface(schema, props, [], kind, schema['x-kubernetes-preserve-unknown-fields'] === true, head, [
    'apiVersion',
    'kind',
    'metadata',
  ]);
  const imports = ['ObjectMeta', ...(e.usesKubeObject ? ['KubeObject'] : [])].sort();
  return {
    path: join(group, v, `${kind.toLowerCase()}-types.ts`),
    text: `// Generated by ctrlmetrics generate types from ${source} (CustomResourceDefinition ${String((crd.metadata as Json | undefined)?.name ?? '')}): do not edit.
// The types of another project's API: no CRD is generated from them.
// +kubebuilder:skip
import type { ${imports.join(', ')} } from 'ctrlmetrics';

/** apiVersion and kind of ${kind}, for watches and clients. */
export const ${c} = { apiVersion: '${apiVersion}', kind: '${kind}' } as const;

${e.interfaces.join('\n')}
// The library answers ${kind}s in this type: \`ctx.client.get(${c}, key)\` is a ${kind} without a cast.
declare module 'ctrlmetrics' {
  interface KnownKinds {
    '${apiVersion}/${kind}': ${kind};
  }
}
`,
  };
}

/** The CRD documents of a YAML file, each with a way to name the line of a path in it. */
function crdsOf(file: string, shown: string): Array<{ crd: Json; locate: Locate }> {
  const text = readFileSync(file, 'utf8');
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines });
  const out: Array<{ crd: Json; locate: Locate }> = [];
  for (const d of Array.isArray(docs) ? docs : [docs]) {
    const at = (offset: number | undefined) => `${shown}:${offset === undefined ? 1 : lines.linePos(offset).line}`;
    if (d.errors.length)
      throw new TypesError(`${at(d.errors[0].pos[0])}: not YAML: ${d.errors[0].message.split('\n')[0]}`);
    // plain JSON: YAML aliases become copies, so the CRD can be written out again in any key order
    const js = d.toJS() as unknown;
    const value = js === undefined ? undefined : (JSON.parse(JSON.stringify(js)) as unknown);
    if (value === null || value === undefined) continue; // an empty document (a trailing ---)
    // the line of the deepest part of the path the document has: a key's own line for a map entry
    const locate: Locate = (path) => {
      for (let n = path.length; n > 0; n--) {
        const parent = (d as Document).getIn(path.slice(0, n - 1), true);
        const last = path[n - 1];
        if (isMap(parent)) {
          const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
          if (pair && isScalar(pair.key) && pair.key.range) return at(pair.key.range[0]);
        } else if (isSeq(parent) && typeof last === 'number') {
          const item = parent.items[last] as { range?: [number, number, number] } | undefined;
          if (item?.range) return at(item.range[0]);
        }
      }
      return at(undefined);
    };
    if (!isObj(value) || value.kind !== 'CustomResourceDefinition' || value.apiVersion !== 'apiextensions.k8s.io/v1') {
      const what = isObj(value)
        ? `${String(value.apiVersion ?? '(no apiVersion)')} ${String(value.kind ?? '(no kind)')}`
        : 'not an object';
      throw new TypesError(
        `${locate(['kind'])}: not a CustomResourceDefinition of apiextensions.k8s.io/v1 (${what}): generate types reads CRDs`,
      );
    }
    const spec = value.spec;
    if (
      !isObj(spec) ||
      typeof spec.group !== 'string' ||
      !isObj(spec.names) ||
      typeof spec.names.kind !== 'string' ||
      !Array.isArray(spec.versions)
    ) {
      throw new TypesError(`${locate(['spec'])}: spec needs group, names.kind and versions`);
    }
    out.push({ crd: value, locate });
  }
  return out;
}

/** The CRD files named by `from`: files, and the .yaml/.yml/.json files of directories (recursively, sorted). */
function filesOf(from: string[], root: string): string[] {
  const out: string[] = [];
  const walk = (p: string): void => {
    if (!existsSync(p)) throw new TypesError(`${relative(root, p) || p}: no such file or directory`);
    if (statSync(p).isDirectory()) {
      for (const name of readdirSync(p).sort()) {
        const q = join(p, name);
        if (statSync(q).isDirectory() || /\.(ya?ml|json)$/.test(name)) walk(q);
      }
    } else out.push(p);
  };
  for (const f of from) walk(resolve(root, f));
  return out;
}

/** A kind a CRD defines, as `create api --external-api-path` needs it. */
export interface CrdKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** The CRD, as JSON. */
  crd: Record<string, unknown>;
  /** The file it came from. */
  file: string;
}

/** Every served version of every CRD in `from` (files, or directories of them). */
export function crdKinds(from: string[], root = process.cwd()): CrdKind[] {
  const out: CrdKind[] = [];
  for (const file of filesOf(from, root)) {
    for (const { crd } of crdsOf(file, relative(root, file) || file)) {
      const spec = crd.spec as Json;
      const names = spec.names as Json;
      for (const v of spec.versions as unknown[]) {
        if (!isObj(v) || v.served === false) continue;
        out.push({
          group: String(spec.group),
          version: String(v.name),
          kind: String(names.kind),
          plural: String(names.plural ?? ''),
          namespaced: spec.scope !== 'Cluster',
          crd,
          file,
        });
      }
    }
  }
  return out;
}

/** The types of every served version of every CRD in `from`. */
export function typesFromCrds(from: string[], root = process.cwd()): GeneratedTypes[] {
  const out: GeneratedTypes[] = [];
  for (const file of filesOf(from, root)) {
    const shown = relative(root, file) || file;
    for (const { crd, locate } of crdsOf(file, shown)) {
      const versions = (crd.spec as Json).versions as unknown[];
      versions.forEach((v, i) => {
        if (isObj(v) && v.served !== false) out.push(typesOfVersion(crd, i, locate, shown));
      });
    }
  }
  const seen = new Set<string>();
  for (const g of out) {
    if (seen.has(g.path)) throw new TypesError(`two CRDs give the same kind and version: ${g.path}`);
    seen.add(g.path);
  }
  return out;
}

/** Writes the types of the CRDs in `from` under `out`; answers each file and whether it changed. */
export async function writeTypesFromCrds(opts: {
  from: string[];
  out: string;
  root?: string;
}): Promise<Array<{ file: string; changed: boolean }>> {
  const root = opts.root ?? process.cwd();
  const written: Array<{ file: string; changed: boolean }> = [];
  for (const g of typesFromCrds(opts.from, root)) {
    const file = resolve(root, opts.out, g.path);
    const changed = !existsSync(file) || readFileSync(file, 'utf8') !== g.text;
    if (changed) {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, g.text);
    }
    written.push({ file, changed });
  }
  return written;
}
