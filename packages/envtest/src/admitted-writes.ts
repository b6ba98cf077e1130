/**
 * Writes through admission webhooks, in kube-apiserver's order: the request's object as it stands after decoding
 * (and a patch applied) goes to the mutating webhooks; what they leave is validated and completed with the fields
 * the server sets (name, uid, generation…); that final object goes to the validating webhooks; only then is it
 * stored. A write whose object changed while webhooks were called is tried again (a few times), as kube retries.
 */
import type { KubeObject, ResourceType } from './types.js';
import type { UserInfo } from './rbac.js';
import { isStaleAdmission, type ObjectService, type WriteOptions } from './objects.js';
import { WarningRecorder, type AdmissionRequest, type WebhookAdmission } from './webhook-admission.js';

/** What a write is, for its admission. */
export interface AdmittedWriteRequest {
  webhooks: WebhookAdmission;
  objects: ObjectService;
  type: ResourceType;
  /** The URL's namespace (undefined for cluster-scoped types). */
  namespace: string | undefined;
  /** The URL's name; `''` for a create. */
  name: string;
  subresource: string;
  user: UserInfo;
  dryRun: boolean;
  /** The request's `Warning` header values; webhook warnings are added. */
  warnings: string[];
  /** The stored object as the request's version sees it (a CRD's conversion webhook); default: apiVersion rewritten. */
  viewOfStored?: (stored: KubeObject) => Promise<KubeObject>;
}

/** Attempts of a write whose object changed under it while webhooks were being called. */
const ATTEMPTS = 3;

function base(
  r: AdmittedWriteRequest,
  objectName: string,
): Omit<AdmissionRequest, 'operation' | 'name' | 'object' | 'oldObject' | 'options'> {
  const t = r.type;
  const isNamespace = t.group === '' && t.resource === 'namespaces';
  return {
    type: t,
    group: t.group,
    version: t.version,
    resource: t.resource,
    subresource: r.subresource,
    // kube names a Namespace object's own name as the request's namespace
    namespace: t.namespaced ? (r.namespace ?? '') : isNamespace ? objectName : '',
    user: r.user,
    dryRun: r.dryRun,
  };
}

function metaOptions(
  kind: string,
  q: { dryRun: boolean; fieldManager?: string | null; fieldValidation?: string | null },
): KubeObject {
  return {
    kind,
    apiVersion: 'meta.k8s.io/v1',
    ...(q.dryRun ? { dryRun: ['All'] } : {}),
    ...(q.fieldManager ? { fieldManager: q.fieldManager } : {}),
    ...(q.fieldValidation ? { fieldValidation: q.fieldValidation } : {}),
  };
}

/**
 * A create, update or patch (`write` runs the request's write with the given options added) under admission
 * webhooks. `operation` is what the write does (a patch that creates is a CREATE).
 */
export async function admittedWrite(
  r: AdmittedWriteRequest & {
    operation: 'CREATE' | 'UPDATE';
    fieldManager?: string | null;
    fieldValidation?: string | null;
  },
  write: (extra: WriteOptions) => KubeObject | Promise<KubeObject>,
): Promise<KubeObject> {
  const recorder = new WarningRecorder(r.warnings);
  const options = metaOptions(r.operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions', r);
  for (let attempt = 1; ; attempt++) {
    try {
      const stored = r.operation === 'UPDATE' ? r.objects.peek(r.type, r.namespace, r.name) : undefined;
      const oldObject = stored
        ? r.viewOfStored
          ? await r.viewOfStored(stored)
          : r.objects.present(r.type, stored)
        : null;
      const input = await write({ untilAdmission: true });
      const inputName = String(input.metadata?.name ?? '');
      const common = { ...base(r, inputName || r.name), operation: r.operation, options, oldObject };
      const mutated = (await r.webhooks.mutate({ ...common, name: inputName, object: input }, recorder)) ?? input;
      const final = await write({ admitted: mutated, dryRun: true, warnings: [] });
      const m = final.metadata ?? {};
      await r.webhooks.validate({ ...common, name: String(m.name ?? ''), object: final }, recorder);
      if (r.dryRun) return final;
      const identity =
        r.operation === 'CREATE'
          ? { identity: { name: String(m.name), uid: String(m.uid), creationTimestamp: String(m.creationTimestamp) } }
          : {};
      return await write({ admitted: mutated, warnings: [], ...identity });
    } catch (err) {
      if (!isStaleAdmission(err) || attempt >= ATTEMPTS) throw err;
    }
  }
}

/** A delete under admission webhooks: they see the stored object as `oldObject` and no object. */
export async function admittedDelete(
  r: AdmittedWriteRequest & { deleteOptions: KubeObject },
  remove: () => KubeObject,
): Promise<KubeObject> {
  const recorder = new WarningRecorder(r.warnings);
  const stored = r.viewOfStored && r.objects.peek(r.type, r.namespace, r.name);
  const oldObject = stored ? await r.viewOfStored!(stored) : r.objects.get(r.type, r.namespace, r.name);
  const { kind: _k, apiVersion: _a, ...given } = r.deleteOptions;
  const options = { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ...given };
  const req: AdmissionRequest = {
    ...base(r, r.name),
    operation: 'DELETE',
    name: r.name,
    object: null,
    oldObject,
    options,
  };
  await r.webhooks.mutate(req, recorder);
  await r.webhooks.validate(req, recorder);
  return remove();
}
