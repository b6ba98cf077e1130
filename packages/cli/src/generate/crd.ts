/**
 * CustomResourceDefinitions from API sources, as controller-gen's `crd` generator writes them: a kind is an
 * exported interface with `apiVersion`, `kind` and `metadata: ObjectMeta`; its group and version come from the
 * file's `+groupName` and `+versionName` markers (or the folder, as kubebuilder's `api/<version>`); the CRD-level
 * markers (resource, subresources, printer columns, storage version) shape the CRD. A schema the API server would
 * refuse is refused here, with the reason.
 */
import { basename, dirname } from 'node:path';
import type * as TS from 'typescript';
import { MarkerError, type Marker } from './markers.js';
import { SchemaBuilder, type Schema } from './schema.js';
import { truncateDescriptions } from './descriptions.js';
import type { ApiSources } from './source.js';

const API_VERSION_DOC =
  'APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DOC =
  'Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** Stamped on generated CRDs, as controller-gen stamps its version. */
export const GENERATOR_ANNOTATION = 'ctrlmetrics.io/generated-by';

interface KindVersion {
  group: string;
  version: string;
  kind: string;
  schema: Schema;
  markers: Marker[];
  site: { file: string; line: number };
}

/** One generated CRD: its file name and object. */
export interface GeneratedCrd {
  fileName: string;
  crd: Record<string, unknown>;
}

const VERSION_FOLDER = /^v\d+((alpha|beta)\d+)?$/;

/** Kubernetes' plural of a lower-cased kind (the rules kubebuilder uses for `create api`). */
export function pluralOf(lowerKind: string): string {
  if (/(s|x|z|ch|sh)$/.test(lowerKind)) return `${lowerKind}es`;
  if (/[^aeiou]y$/.test(lowerKind)) return `${lowerKind.slice(0, -1)}ies`;
  return `${lowerKind}s`;
}

function markerValue<T>(markers: Marker[], name: string): T | undefined {
  return markers.find((m) => m.name === name)?.value as T | undefined;
}

/** Whether an interface declaration is an API kind. */
function isKind(ts: typeof TS, src: ApiSources, decl: TS.InterfaceDeclaration): boolean {
  if (!decl.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) return false;
  const type = src.checker.getTypeAtLocation(decl);
  const names = new Set(src.checker.getPropertiesOfType(type).map((p) => p.getName()));
  if (!names.has('apiVersion') || !names.has('kind') || !names.has('metadata')) return false;
  const meta = src.checker.getPropertyOfType(type, 'metadata')?.valueDeclaration;
  return !!meta && ts.isPropertySignature(meta) && !!meta.type && /\bObjectMeta\b/.test(meta.type.getText());
}

/** The apiVersion a kind's type pins (`'apps/v1'`, or `typeof X.apiVersion` of a constant), if it pins one. */
function pinnedApiVersion(src: ApiSources, decl: TS.InterfaceDeclaration): string | undefined {
  const prop = src.checker.getPropertyOfType(src.checker.getTypeAtLocation(decl), 'apiVersion');
  if (!prop) return undefined;
  const t = src.checker.getTypeOfSymbolAtLocation(prop, decl);
  return t.isStringLiteral() ? t.value : undefined;
}

/** Whether an apiVersion is of Kubernetes' own groups: the core group, one without a dot, or one under k8s.io. */
function isKubernetesApiVersion(apiVersion: string): boolean {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
  return !group.includes('.') || group.endsWith('.k8s.io');
}

/** Finds the kinds of the sources and builds their schemas. */
function kindsOf(src: ApiSources): KindVersion[] {
  const ts = src.ts;
  const builder = new SchemaBuilder(src);
  const out: KindVersion[] = [];
  for (const sf of src.sources()) {
    const fileMarkers = src.markersOfFile(sf);
    if (fileMarkers.some((m) => m.name === 'kubebuilder:skip')) continue;
    for (const stmt of sf.statements) {
      if (!ts.isInterfaceDeclaration(stmt) || !isKind(ts, src, stmt)) continue;
      const site = { file: src.display(sf.fileName), line: src.lineOf(sf, stmt.getStart(sf)) };
      const group = markerValue<string>(fileMarkers, 'groupName');
      // a type of one of Kubernetes' own kinds (a controller's Deployment) is never a kind of the project
      const pinned = pinnedApiVersion(src, stmt);
      if (pinned !== undefined && isKubernetesApiVersion(pinned)) {
        if (group === undefined) continue;
        throw new MarkerError(
          site,
          `${stmt.name.text} (${pinned}) is one of Kubernetes' own kinds, which get no CRD: type it with kubernetes-types (import type { ${stmt.name.text} } from 'kubernetes-types/<group>/<version>.js') outside the API files`,
        );
      }
      if (group === undefined)
        throw new MarkerError(
          site,
          `the kind ${stmt.name.text} has no group: add // +groupName=<group> to ${basename(sf.fileName)}`,
        );
      const folder = basename(dirname(sf.fileName));
      const version =
        markerValue<string>(fileMarkers, 'versionName') ?? (VERSION_FOLDER.test(folder) ? folder : undefined);
      if (!version)
        throw new MarkerError(
          site,
          `the kind ${stmt.name.text} has no version: add // +versionName=<version> to ${basename(sf.fileName)}, or put it in a folder named for its version (api/v1alpha1)`,
        );
      const comments = src.commentsOf(stmt);
      const root = builder.objectOf(stmt);
      const props = (root.properties ?? {}) as Record<string, Schema>;
      props.apiVersion = { description: API_VERSION_DOC, type: 'string' };
      props.kind = { description: KIND_DOC, type: 'string' };
      // the root metadata may say nothing but its type (the API server refuses more)
      props.metadata = { type: 'object' };
      const required = ((root.required ?? []) as string[]).filter(
        (r) => !['apiVersion', 'kind', 'metadata'].includes(r),
      );
      const schema: Schema = {
        ...(comments.doc !== undefined ? { description: comments.doc } : {}),
        type: 'object',
        properties: props,
        ...(required.length ? { required } : {}),
      };
      builder.apply(
        schema,
        comments.markers.filter((m) => !isCrdLevel(m.name)),
        stmt,
      );
      out.push({
        group,
        version,
        kind: stmt.name.text,
        schema,
        markers: comments.markers.filter((m) => isCrdLevel(m.name)),
        site,
      });
    }
  }
  for (const sf of src.sources()) src.strayMarkers(sf);
  return out;
}

function isCrdLevel(name: string): boolean {
  return (
    name === 'kubebuilder:resource' ||
    name.startsWith('kubebuilder:subresource:') ||
    name === 'kubebuilder:printcolumn' ||
    name === 'kubebuilder:storageversion'
  );
}

/** How CRDs are generated (controller-gen's `crd:` options). */
export interface CrdOptions {
  /** Cut every description to this many bytes (controller-gen's `maxDescLen`); `0` removes them. Unset: kept whole. */
  maxDescLen?: number;
}

/** The CRDs of the API sources, one per group and kind, with every version found. */
export function generateCrds(src: ApiSources, opts: CrdOptions = {}): GeneratedCrd[] {
  if (opts.maxDescLen !== undefined && (!Number.isInteger(opts.maxDescLen) || opts.maxDescLen < 0))
    throw new RangeError(`maxDescLen must be a whole number of bytes, 0 or more; got ${opts.maxDescLen}`);
  const kinds = kindsOf(src);
  const byGroupKind = new Map<string, KindVersion[]>();
  for (const k of kinds) {
    const key = `${k.kind}.${k.group}`;
    byGroupKind.set(key, [...(byGroupKind.get(key) ?? []), k]);
  }
  const out: GeneratedCrd[] = [];
  for (const key of [...byGroupKind.keys()].sort()) {
    const versions = byGroupKind.get(key)!.sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : 0));
    out.push(crdOf(versions, opts));
  }
  return out;
}

function crdOf(versions: KindVersion[], opts: CrdOptions): GeneratedCrd {
  const first = versions[0];
  const { group, kind } = first;
  for (const v of versions) {
    const dup = versions.filter((x) => x.version === v.version);
    if (dup.length > 1)
      throw new MarkerError(siteOf(dup[1]), `the kind ${kind} is defined twice in ${group}/${v.version}`);
  }
  let plural = pluralOf(kind.toLowerCase());
  let singular = kind.toLowerCase();
  let scope = 'Namespaced';
  let shortNames: string[] | undefined;
  let categories: string[] | undefined;
  for (const v of versions) {
    const r = markerValue<Record<string, unknown>>(v.markers, 'kubebuilder:resource');
    if (!r) continue;
    if (r.path) plural = String(r.path);
    if (r.singular) singular = String(r.singular);
    if (r.scope) {
      if (r.scope !== 'Namespaced' && r.scope !== 'Cluster')
        throw new MarkerError(
          v.markers.find((m) => m.name === 'kubebuilder:resource')!,
          `scope must be Namespaced or Cluster, got ${JSON.stringify(r.scope)}`,
        );
      scope = String(r.scope);
    }
    if (r.shortName) shortNames = r.shortName as string[];
    if (r.categories) categories = r.categories as string[];
  }
  const storage = versions.filter((v) => v.markers.some((m) => m.name === 'kubebuilder:storageversion'));
  if (versions.length > 1 && storage.length !== 1) {
    throw new MarkerError(
      siteOf(first),
      storage.length === 0
        ? `CRD for ${kind}.${group} has no storage version: mark one version's kind // +kubebuilder:storageversion`
        : `CRD for ${kind}.${group} has ${storage.length} storage versions; exactly one may be marked // +kubebuilder:storageversion`,
    );
  }
  const crdVersions = versions.map((v) => {
    const columns = v.markers.filter((m) => m.name === 'kubebuilder:printcolumn').map((m) => printerColumn(m));
    const status = v.markers.some((m) => m.name === 'kubebuilder:subresource:status');
    const scale = markerValue<Record<string, string>>(v.markers, 'kubebuilder:subresource:scale');
    const subresources: Schema | undefined =
      status || scale || columns.length
        ? {
            ...(scale
              ? {
                  scale: {
                    specReplicasPath: scale.specpath,
                    statusReplicasPath: scale.statuspath,
                    ...(scale.selectorpath ? { labelSelectorPath: scale.selectorpath } : {}),
                  },
                }
              : {}),
            ...(status ? { status: {} } : {}),
          }
        : undefined;
    checkSchema(v, status);
    return {
      ...(columns.length ? { additionalPrinterColumns: columns } : {}),
      name: v.version,
      schema: {
        openAPIV3Schema: opts.maxDescLen === undefined ? v.schema : truncateDescriptions(v.schema, opts.maxDescLen),
      },
      served: true,
      storage: versions.length === 1 || storage[0] === v,
      ...(subresources ? { subresources } : {}),
    };
  });
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { annotations: { [GENERATOR_ANNOTATION]: 'ctrlmetrics generate crd' }, name: `${plural}.${group}` },
    spec: {
      group,
      names: {
        ...(categories ? { categories } : {}),
        kind,
        listKind: `${kind}List`,
        plural,
        ...(shortNames ? { shortNames } : {}),
        singular,
      },
      scope,
      versions: crdVersions,
    },
  };
  return { fileName: `${group}_${plural}.yaml`, crd };
}

function siteOf(v: KindVersion): { file: string; line: number } {
  return v.site;
}

const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];
const COLUMN_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'password'];

function printerColumn(m: Marker): Schema {
  const a = m.value as Record<string, unknown>;
  if (!COLUMN_TYPES.includes(String(a.type)))
    throw new MarkerError(
      m,
      `printcolumn type must be one of ${COLUMN_TYPES.join(', ')}; got ${JSON.stringify(a.type)}`,
    );
  if (a.format !== undefined && !COLUMN_FORMATS.includes(String(a.format)))
    throw new MarkerError(
      m,
      `printcolumn format must be one of ${COLUMN_FORMATS.join(', ')}; got ${JSON.stringify(a.format)}`,
    );
  if (!String(a.JSONPath).startsWith('.'))
    throw new MarkerError(
      m,
      `printcolumn JSONPath must be a simple JSON path starting with ".", got ${JSON.stringify(a.JSONPath)}`,
    );
  return {
    ...(a.description !== undefined ? { description: a.description } : {}),
    ...(a.format !== undefined ? { format: a.format } : {}),
    jsonPath: a.JSONPath,
    name: a.name,
    ...(a.priority ? { priority: a.priority } : {}),
    type: a.type,
  };
}

/** Keywords the root schema may use once the status subresource is on (apiextensions' allow list). */
const ROOT_WITH_STATUS = new Set([
  'description',
  'type',
  'format',
  'title',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'required',
  'items',
  'properties',
  'externalDocs',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
]);

/** The schema rules apiextensions enforces that a generated schema could break, with its reasons. */
function checkSchema(v: KindVersion, status: boolean): void {
  const at = siteOf(v);
  const refuse = (path: string, why: string) =>
    new MarkerError(at, `${v.kind} ${v.version}: ${path}: ${why} (the API server would refuse this CRD)`);
  if (status)
    for (const k of Object.keys(v.schema))
      if (!ROOT_WITH_STATUS.has(k))
        throw refuse('openAPIV3Schema', `${k} is not allowed at the root with the status subresource`);
  const walk = (s: Schema, path: string, inJunctor: boolean) => {
    const hasType = typeof s.type === 'string';
    if (
      !inJunctor &&
      !hasType &&
      s['x-kubernetes-preserve-unknown-fields'] !== true &&
      s['x-kubernetes-int-or-string'] !== true
    )
      throw refuse(path, 'type: Required value: must not be empty for specified fields');
    if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== true)
      throw refuse(path, 'additionalProperties and properties are mutual exclusive');
    if (s.type === 'array' && !s.items) throw refuse(path, 'items: Required value: must be specified');
    if (s['x-kubernetes-list-type'] === 'map') {
      const keys = (s['x-kubernetes-list-map-keys'] ?? []) as string[];
      const item = (s.items ?? {}) as Schema;
      if (!keys.length)
        throw refuse(
          path,
          'x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map',
        );
      for (const k of keys) {
        const p = ((item.properties ?? {}) as Record<string, Schema>)[k];
        if (!p)
          throw refuse(path, `x-kubernetes-list-map-keys: entries must all be names of item properties (${k} is not)`);
        if (!((item.required ?? []) as string[]).includes(k) && p.default === undefined)
          throw refuse(path, `x-kubernetes-list-map-keys: ${k} must be required or have a default`);
      }
    }
    for (const [k, child] of Object.entries((s.properties ?? {}) as Record<string, Schema>))
      walk(child, `${path}.properties[${k}]`, inJunctor);
    if (s.items && typeof s.items === 'object') walk(s.items as Schema, `${path}.items`, inJunctor);
    if (s.additionalProperties && typeof s.additionalProperties === 'object')
      walk(s.additionalProperties as Schema, `${path}.additionalProperties`, inJunctor);
    for (const j of ['allOf', 'anyOf', 'oneOf'])
      for (const [i, c] of ((s[j] ?? []) as Schema[]).entries()) walk(c, `${path}.${j}[${i}]`, true);
  };
  walk(v.schema, 'openAPIV3Schema', false);
}
