/**
 * `PartialObjectMetadata` answers, as kube-apiserver gives them to clients that ask with
 * `Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1` (client-go's metadata client,
 * controller-runtime's metadata-only watches): the object's metadata only, as kind PartialObjectMetadata, or a
 * PartialObjectMetadataList for a list; asking for the wrong one of the two is 406 NotAcceptable in kube's words.
 */
import type { KubeObject, ResourceType } from './types.js';
import { ApiError } from './status.js';

export type PartialKind = 'PartialObjectMetadata' | 'PartialObjectMetadataList';

/**
 * What the `Accept` header asks for, taking its media ranges in order as kube does: a PartialObjectMetadata form
 * (JSON, meta.k8s.io/v1 or v1beta1), or undefined for plain objects (or a Table, handled elsewhere). A header whose
 * only ranges are transformations the server does not offer is 406.
 */
export function partialMetadataWanted(accept: string | undefined): PartialKind | undefined {
  if (!accept) return undefined;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((p) => p.trim());
    const p = Object.fromEntries(params.map((x) => x.split('=', 2).map((v) => v.trim()) as [string, string]));
    if (!p.as) {
      if (
        [
          'application/json',
          'application/yaml',
          'application/vnd.kubernetes.protobuf',
          '*/*',
          'application/*',
          '',
        ].includes(type ?? '')
      )
        return undefined;
      continue;
    }
    if (p.as === 'Table') return undefined;
    const known =
      (p.as === 'PartialObjectMetadata' || p.as === 'PartialObjectMetadataList') &&
      p.g === 'meta.k8s.io' &&
      (p.v === 'v1' || p.v === 'v1beta1');
    if (known && (type === 'application/json' || type === '*/*')) return p.as as PartialKind;
  }
  throw new ApiError(
    406,
    'NotAcceptable',
    'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
  );
}

/** The Go type kube names in its 406 (`*core.ConfigMap`, `*apps.DeploymentList`, `*unstructured.Unstructured`). */
function goType(t: ResourceType, list: boolean): string {
  if (t.crd) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  return `*${t.group ? t.group.split('.')[0] : 'core'}.${t.kind}${list ? 'List' : ''}`;
}

/** Refuses a request whose answer is (`list`) or is not a list when the other form was asked for. */
export function checkPartialForm(t: ResourceType, wanted: PartialKind, list: boolean): void {
  if (wanted === 'PartialObjectMetadata' && list)
    throw new ApiError(
      406,
      'NotAcceptable',
      `you requested PartialObjectMetadata, but the requested object is a list (${goType(t, true)})`,
    );
  if (wanted === 'PartialObjectMetadataList' && !list)
    throw new ApiError(
      406,
      'NotAcceptable',
      `you requested PartialObjectMetadataList, but the requested object is not a list (${goType(t, false)})`,
    );
}

/** An object as PartialObjectMetadata. */
export function partialOf(o: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
}
