/**
 * Writes of custom resources whose CRD converts by webhook, in kube-apiserver's order: the stored object is
 * converted to the request's version for the write to start from; the write runs there (decoding, defaults,
 * validation and field ownership in that version); its outcome is converted to the storage version and stored;
 * the answer is the stored object converted back, so a lossy conversion shows as it does on a cluster. A write
 * whose stored object changed while the webhook was called is tried again (a few times).
 */
import { isDeepStrictEqual } from 'node:util';
import type { CustomResourceConverter } from './cr-conversion.js';
import { isStaleAdmission, type ObjectService, type WriteOptions } from './objects.js';
import type { KubeObject, ResourceType } from './types.js';

/** Attempts of a write whose stored object changed under it while the webhook was called. */
const ATTEMPTS = 3;

/** The write's context: the converter, the objects, the type and the URL's namespace and name ('' for a create). */
export interface ConvertedWriteRequest {
  converter: CustomResourceConverter;
  objects: ObjectService;
  type: ResourceType;
  namespace: string | undefined;
  name: string;
  /** The request is a dry run: nothing is stored (nor converted). */
  dryRun: boolean;
}

/**
 * Runs `write` (a create, update or patch of the request, with the given options added) for a type converted by
 * webhook. Admission's intermediate steps (`untilAdmission`, dry runs) run in the request's version only.
 */
export async function convertedWrite(
  r: ConvertedWriteRequest,
  write: (extra: WriteOptions) => KubeObject,
  extra: WriteOptions = {},
): Promise<KubeObject> {
  const t = r.type;
  const storage = r.converter.storageVersion(t);
  for (let attempt = 1; ; attempt++) {
    const stored = r.name ? r.objects.peek(t, r.namespace, r.name) : undefined;
    const viewOfOld = stored ? (await r.converter.convert(t, [stored], t.version))[0] : undefined;
    if (extra.untilAdmission || extra.dryRun || r.dryRun || !storage) return write({ ...extra, viewOfOld });
    try {
      const next = write({ ...extra, viewOfOld, dryRun: true });
      // nothing changed: nothing to store (the write answered the object as it is)
      if (
        stored &&
        viewOfOld &&
        next.metadata?.resourceVersion === stored.metadata.resourceVersion &&
        same(next, r.objects.present(t, viewOfOld))
      )
        return next;
      const [inStorage] = await r.converter.convert(t, [next], storage);
      const committed = r.objects.storeConverted(t, stored, inStorage);
      const [back] = await r.converter.convert(t, [committed], t.version);
      return r.objects.present(t, back);
    } catch (err) {
      if (!isStaleAdmission(err) || attempt >= ATTEMPTS) throw err;
    }
  }
}

function same(a: KubeObject, b: KubeObject): boolean {
  return isDeepStrictEqual(a, b);
}
