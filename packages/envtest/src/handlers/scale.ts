/**
 * The `scale` subresource: a built-in workload's (Deployment, ReplicaSet, StatefulSet, ReplicationController) or a
 * custom resource's through its CRD's scale paths, read and written as an autoscaling/v1 Scale, with admission
 * seeing that Scale as kube-apiserver sends it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { convertedWrite } from '../converted-writes.js';
import { list, record, records, type JsonObject } from '../json.js';
import type { WriteOptions } from '../objects.js';
import { applyPatch } from '../patch.js';
import type { UserInfo } from '../rbac.js';
import type { RequestInfo } from '../requestinfo.js';
import { sendWritten, warn } from '../responses.js';
import type { ServerDeps } from '../server-deps.js';
import { invalid, methodNotAllowed } from '../status.js';
import type { KubeObject, ResourceType } from '../types.js';
import { WarningRecorder, type AdmissionRequest } from '../webhook-admission.js';

/** `GET`, `PUT` or `PATCH` of `/scale`; the warnings of admission reach the client, with a refusal too. */
export async function scale(
  d: ServerDeps,
  res: ServerResponse,
  t: ResourceType,
  ns: string | undefined,
  info: RequestInfo,
  method: string,
  req: IncomingMessage,
  body: () => Promise<unknown>,
  a: { user: UserInfo; dryRun: boolean },
): Promise<void> {
  const warnings: string[] = [];
  let out: KubeObject;
  try {
    out = await scaleObject(d, t, ns, info, method, req, body, { ...a, warnings });
  } finally {
    warn(res, warnings);
  }
  return sendWritten(d, res, 200, out, method === 'HEAD');
}

/**
 * A built-in kind's selector as a Scale's `status.selector` text: a ReplicationController's map, or a LabelSelector
 * (`matchLabels` and `matchExpressions`), its requirements sorted by key as apimachinery writes them.
 */
function selectorText(selector: unknown): string {
  const s = record(selector);
  if (!s) return '';
  const isLabelSelector = 'matchLabels' in s || 'matchExpressions' in s;
  const labels = isLabelSelector ? (record(s.matchLabels) ?? {}) : s;
  const parts: Array<[string, string]> = Object.entries(labels).map(([k, v]) => [k, `${k}=${String(v)}`]);
  for (const e of isLabelSelector ? records(s.matchExpressions) : []) {
    const key = String(e.key ?? '');
    const values = Array.isArray(e.values) ? list(e.values).map(String).sort().join(',') : '';
    if (e.operator === 'In') parts.push([key, `${key} in (${values})`]);
    else if (e.operator === 'NotIn') parts.push([key, `${key} notin (${values})`]);
    else if (e.operator === 'Exists') parts.push([key, key]);
    else if (e.operator === 'DoesNotExist') parts.push([key, `!${key}`]);
  }
  return parts
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, text]) => text)
    .join(',');
}

/** The value at a CRD scale path (`.spec.replicas`). */
function atPath(o: KubeObject, path: string): unknown {
  return path
    .split('.')
    .filter(Boolean)
    .reduce<unknown>((v, k) => record(v)?.[k], o);
}

/** A merge patch that sets a CRD scale path. */
function patchAt(path: string, value: unknown): JsonObject {
  let out: unknown = value;
  for (const k of path.split('.').filter(Boolean).reverse()) out = { [k]: out };
  return record(out) ?? {};
}

/** The Scale a `/scale` request reads or writes, as its answer. */
async function scaleObject(
  d: ServerDeps,
  t: ResourceType,
  ns: string | undefined,
  info: RequestInfo,
  method: string,
  req: IncomingMessage,
  body: () => Promise<unknown>,
  a: { user: UserInfo; dryRun: boolean; warnings: string[] },
): Promise<KubeObject> {
  const paths = t.scale;
  const view = (o: KubeObject): KubeObject => {
    const m = o.metadata ?? {};
    const metadata = {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    };
    if (paths) {
      const selector = paths.labelSelectorPath ? atPath(o, paths.labelSelectorPath) : undefined;
      return {
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        metadata,
        spec: { replicas: Number(atPath(o, paths.specReplicasPath) ?? 0) },
        status: {
          replicas: Number(atPath(o, paths.statusReplicasPath) ?? 0),
          ...(typeof selector === 'string' && selector ? { selector } : {}),
        },
      };
    }
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata,
      spec: { replicas: record(o.spec)?.replicas ?? 1 },
      status: { replicas: record(o.status)?.replicas ?? 0, selector: selectorText(record(o.spec)?.selector) },
    };
  };
  // a CRD converting by webhook: the Scale is read from, and written through, the object in the request's version
  const converter = d.conversions?.webhookCrd(t) ? d.conversions : undefined;
  const read = async (): Promise<KubeObject> => {
    const stored = converter && d.objects.peek(t, ns, info.name);
    return stored
      ? d.objects.present(t, (await converter.convert(t, [stored], t.version))[0])
      : d.objects.get(t, ns, info.name);
  };
  const patchObject = async (p: JsonObject, dryRun: boolean): Promise<KubeObject> => {
    const write = (extra: WriteOptions) =>
      d.objects.patch(t, ns, info.name, 'application/merge-patch+json', p, { dryRun, ...extra });
    return converter
      ? convertedWrite({ converter, objects: d.objects, type: t, namespace: ns, name: info.name, dryRun }, write)
      : write({});
  };
  const current = view(await read());
  if (method === 'GET' || method === 'HEAD') return current;
  // the Scale as the client wants it: unknown until its fields are read below
  let wanted: JsonObject;
  if (method === 'PATCH')
    wanted = record(applyPatch(String(req.headers['content-type'] ?? ''), current, await body())) ?? {};
  else if (method === 'PUT') wanted = record(await body()) ?? {};
  else throw methodNotAllowed();
  // admission sees the Scale (autoscaling/v1) of the resource's scale subresource, as kube-apiserver sends it
  const webhooks = d.webhooks?.applies(t) ? d.webhooks : undefined;
  const recorder = webhooks && new WarningRecorder(a.warnings);
  const admission: AdmissionRequest | undefined = webhooks && {
    type: t,
    group: t.group,
    version: t.version,
    resource: t.resource,
    subresource: 'scale',
    namespace: ns ?? '',
    name: info.name,
    operation: 'UPDATE',
    user: a.user,
    dryRun: a.dryRun,
    options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', ...(a.dryRun ? { dryRun: ['All'] } : {}) },
    object: wanted,
    oldObject: current,
    objectKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
  };
  if (webhooks && admission && recorder) wanted = (await webhooks.mutate(admission, recorder)) ?? wanted;
  const replicas = record(wanted.spec)?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid('Scale', 'autoscaling', info.name, [
      {
        field: 'spec.replicas',
        message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
      },
    ]);
  }
  // passed on as sent: the store refuses a resourceVersion that is not a string
  const rv = record(wanted.metadata)?.resourceVersion;
  const patch: JsonObject = {
    ...(paths ? patchAt(paths.specReplicasPath, replicas) : { spec: { replicas } }),
    ...(rv ? { metadata: { resourceVersion: rv } } : {}),
  };
  if (webhooks && admission && recorder) {
    const final = view(await patchObject(patch, true));
    await webhooks.validate({ ...admission, object: final }, recorder);
  }
  return view(await patchObject(patch, a.dryRun));
}
