/**
 * Checks of single objects that need no storage: JSON shape of metadata (kube's decoder) and
 * CustomResourceDefinition validation.
 */
import { badRequest, type FieldCause } from './status.js';
import type { KubeObject } from './types.js';
import { list, record } from './json.js';
import { isDeepStrictEqual } from 'node:util';
import { defaultCauses, structuralSchemaCauses } from './crd-schema.js';
import { conversionCauses } from './crd-conversion.js';

const STRING_META = [
  'name',
  'generateName',
  'namespace',
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
];

/** Rejects metadata of the wrong JSON types with 400, as kube's decoder does (a number as name never reaches storage). */
export function checkMetadataShape(meta: unknown): void {
  if (meta === undefined || meta === null) return;
  const fail = (field: string, want: string) => {
    throw badRequest(`the request body could not be decoded: metadata${field ? `.${field}` : ''} must be ${want}`);
  };
  if (typeof meta !== 'object' || Array.isArray(meta)) fail('', 'an object');
  const m = meta as Record<string, unknown>;
  for (const f of STRING_META) if (m[f] !== undefined && m[f] !== null && typeof m[f] !== 'string') fail(f, 'a string');
  for (const f of ['labels', 'annotations']) {
    const v = m[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string'))
      fail(f, 'a map of strings');
  }
  if (
    m.finalizers != null &&
    (!Array.isArray(m.finalizers) || m.finalizers.some((x: unknown) => typeof x !== 'string'))
  )
    fail('finalizers', 'a list of strings');
  if (m.ownerReferences != null && !Array.isArray(m.ownerReferences)) fail('ownerReferences', 'a list');
}

/**
 * The schemas of a CRD's versions to check, with the path errors name: kube-apiserver reads a v1 CRD whose versions
 * all have the same schema as one schema at `spec.validation.openAPIV3Schema` (its internal type), so that is where
 * their errors are; schemas that differ are checked one by one at `spec.versions[i].schema.openAPIV3Schema`.
 */
function schemasToCheck(versions: unknown[]): Array<{ schema: unknown; path: string }> {
  const schemas = versions.map((v) => record(record(v)?.schema)?.openAPIV3Schema);
  if (schemas.length && schemas[0] !== undefined && schemas.every((x) => isDeepStrictEqual(x, schemas[0]))) {
    return [{ schema: schemas[0], path: 'spec.validation.openAPIV3Schema' }];
  }
  return schemas.flatMap((schema, i) =>
    schema === undefined ? [] : [{ schema, path: `spec.versions[${i}].schema.openAPIV3Schema` }],
  );
}

export function validateCRD(o: KubeObject): FieldCause[] {
  const causes: FieldCause[] = [];
  const spec = record(o.spec) ?? {};
  const names = record(spec.names) ?? {};
  if (!spec.group) causes.push({ field: 'spec.group', message: 'Required value', reason: 'FieldValueRequired' });
  if (!names.plural)
    causes.push({ field: 'spec.names.plural', message: 'Required value', reason: 'FieldValueRequired' });
  if (!names.kind) causes.push({ field: 'spec.names.kind', message: 'Required value', reason: 'FieldValueRequired' });
  if (spec.group && names.plural && o.metadata?.name !== `${String(names.plural)}.${String(spec.group)}`) {
    causes.push({
      field: 'metadata.name',
      message: `Invalid value: ${JSON.stringify(o.metadata?.name)}: must be spec.names.plural+"."+spec.group`,
    });
  }
  if (spec.scope && spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    causes.push({
      field: 'spec.scope',
      message: `Unsupported value: ${JSON.stringify(spec.scope)}: supported values: "Cluster", "Namespaced"`,
      reason: 'FieldValueNotSupported',
    });
  }
  const versions = list(spec.versions);
  if (!versions.length)
    causes.push({
      field: 'spec.versions',
      message: 'Invalid value: null: must have exactly one version marked as storage version',
      reason: 'FieldValueInvalid',
    });
  else if (versions.filter((v) => record(v)?.storage).length !== 1) {
    causes.push({
      field: 'spec.versions',
      message: 'Invalid value: must have exactly one version marked as storage version',
    });
  }
  for (const { schema, path } of schemasToCheck(versions)) {
    const structural = structuralSchemaCauses(schema, path);
    causes.push(...structural);
    // defaults are checked against a structural schema only
    if (!structural.length) causes.push(...defaultCauses(schema, path));
  }
  causes.push(...conversionCauses(spec));
  return causes;
}
