/**
 * Custom resources between their versions, as kube-apiserver converts them: with the CRD's strategy `None` only
 * `apiVersion` changes; with `Webhook` the objects not already in the wanted version go to the CRD's conversion
 * webhook in one ConversionReview (apiextensions.k8s.io/v1, a list sent sparse and merged back in place), and the
 * answer is checked as kube checks it — the uid, the count, each object's version and kind, name, namespace and uid
 * unchanged — and each object's metadata is restored but for labels and annotations. A failure is kube's plain
 * error `conversion webhook for <group/version, Kind=kind> …`, answered 500 as kube answers it.
 */
import { randomUUID } from 'node:crypto';
import { apiVersionOf } from './resources.js';
import type { KubeObject, ResourceType } from './types.js';
import { isRecord, list, record, records, str, type JsonObject } from './json.js';
import { ApiError } from './status.js';
import { postReview, WebhookCallError, type ServiceResolver } from './webhook-call.js';

/** kube's conversion client: no deadline of its own, the http.Client's 30 s. */
const CONVERSION_TIMEOUT_SECONDS = 30;

/** The strategy of a CRD's conversion (None when unset). */
export function conversionStrategy(crd: KubeObject | undefined): 'None' | 'Webhook' {
  return record(record(crd?.spec)?.conversion)?.strategy === 'Webhook' ? 'Webhook' : 'None';
}

/** The version a CRD stores objects in. */
export function storageVersionOf(crd: KubeObject | undefined): string | undefined {
  return str(records(record(crd?.spec)?.versions).find((v) => v.storage)?.name);
}

function versionOf(apiVersion: unknown): string {
  const s = String(apiVersion ?? '');
  return s.slice(s.lastIndexOf('/') + 1);
}

function gvkText(group: string, version: string, kind: string): string {
  return `${group}/${version}, Kind=${kind}`;
}

/** A conversion failure, as kube's plain error reaches clients: 500 with no reason. */
function failure(message: string): ApiError {
  return new ApiError(500, '', message);
}

/** Converts custom resources between the versions of their CRD. */
export class CustomResourceConverter {
  constructor(
    private readonly opts: {
      /** The CRD object named by a type's `crd`. */
      crdOf: (name: string) => KubeObject | undefined;
      resolveService?: ServiceResolver;
    },
  ) {}

  /** The type's CRD when its conversion is by webhook, else undefined (nothing to call). */
  webhookCrd(t: ResourceType): KubeObject | undefined {
    if (!t.crd) return undefined;
    const crd = this.opts.crdOf(t.crd);
    return conversionStrategy(crd) === 'Webhook' ? crd : undefined;
  }

  /** The CRD's storage version (undefined for built-in types). */
  storageVersion(t: ResourceType): string | undefined {
    return t.crd ? storageVersionOf(this.opts.crdOf(t.crd)) : undefined;
  }

  /**
   * The objects in `version` (copies; the input is left alone). Only the objects not already in it are sent to a
   * webhook, in one review; with strategy None (or a built-in type) only apiVersion changes.
   */
  async convert<T extends KubeObject>(t: ResourceType, objects: T[], version: string): Promise<T[]> {
    const target = apiVersionOf({ group: t.group, version });
    const crd = this.webhookCrd(t);
    const pending = objects
      .map((o, i) => ({ o, i }))
      .filter(({ o }) => crd && versionOf(o.apiVersion) !== version && !isEmpty(o));
    const out: T[] = objects.map((o) => ({ ...o, apiVersion: target }));
    if (!crd || pending.length === 0) return out;
    const first = pending[0].o;
    const what = gvkText(t.group, versionOf(first.apiVersion), t.kind);
    const uid = randomUUID();
    const webhook = record(record(record(crd.spec)?.conversion)?.webhook);
    let reply: unknown;
    try {
      reply = await postReview({
        clientConfig: record(webhook?.clientConfig) ?? {},
        timeoutSeconds: CONVERSION_TIMEOUT_SECONDS,
        review: {
          kind: 'ConversionReview',
          apiVersion: 'apiextensions.k8s.io/v1',
          request: { uid, desiredAPIVersion: target, objects: pending.map(({ o }) => o) },
        },
        resolveService: this.opts.resolveService,
        userAgent: 'kube-apiserver',
        prefix: '',
        missingService: (name) => `service "${name}" not found`,
      });
    } catch (err) {
      if (err instanceof WebhookCallError) throw failure(`conversion webhook for ${what} failed: ${err.message}`);
      throw err;
    }
    const converted = checkReply(reply, uid, what, pending.length);
    converted.forEach((c, k) => {
      const { o, i } = pending[k];
      if (!isRecord(c))
        throw failure(`conversion webhook for ${what} returned invalid object at index ${k}: not an object`);
      if (c.apiVersion !== target)
        throw failure(
          `conversion webhook for ${what} returned invalid object at index ${k}: invalid groupVersion (expected ${target}, received ${String(c.apiVersion ?? '')})`,
        );
      const why = changedIdentity(o, c);
      if (why) throw failure(`conversion webhook for ${what} returned invalid object: ${why}`);
      // kube keeps the original metadata but for labels and annotations, which the webhook may change
      const metadata: JsonObject = { ...o.metadata };
      const returned = record(c.metadata);
      for (const key of ['labels', 'annotations'] as const) {
        if (returned?.[key] === undefined) delete metadata[key];
        else metadata[key] = returned[key];
      }
      // decoded into a map, as kube decodes it: its keys come out sorted wherever it is encoded again; the webhook's
      // labels and annotations are checked as any write's metadata before they are stored; the rest of the metadata
      // is the original's, so the object is still what it was (a stored object keeps its name)
      out[i] = sortedDeep({ ...c, apiVersion: target, kind: t.kind, metadata }) as T;
    });
    return out;
  }
}

function sortedDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedDeep);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortedDeep((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** An object with nothing but apiVersion and kind is never sent. */
function isEmpty(o: KubeObject): boolean {
  return Object.keys(o).every((k) => k === 'apiVersion' || k === 'kind');
}

/** kube's checks of a v1 ConversionReview reply; the converted objects when it passes. */
function checkReply(reply: unknown, uid: string, what: string, expected: number): unknown[] {
  const failed = (why: string) => failure(`conversion webhook for ${what} failed: ${why}`);
  if (!isRecord(reply)) throw failed('no response provided');
  const known =
    reply.kind === 'ConversionReview' &&
    (reply.apiVersion === 'apiextensions.k8s.io/v1' || reply.apiVersion === 'apiextensions.k8s.io/v1beta1');
  // kube decodes the answer with a scheme that knows ConversionReview only
  if (!known)
    throw failed(
      `no kind ${JSON.stringify(String(reply.kind ?? ''))} is registered for version ${JSON.stringify(String(reply.apiVersion ?? ''))} in scheme "k8s.io/apiserver/pkg/util/webhook/client.go:69"`,
    );
  if (reply.apiVersion !== 'apiextensions.k8s.io/v1')
    throw failed(
      `expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${String(reply.apiVersion)}, Kind=ConversionReview`,
    );
  if (!reply.response || typeof reply.response !== 'object') throw failed('no response provided');
  // a list has none of a response's fields: it fails the uid check below
  const r = record(reply.response) ?? {};
  if (String(r.uid ?? '') !== uid)
    throw failed(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(r.uid ?? ''))}`);
  const status = record(r.result)?.status;
  if (status !== 'Success') {
    const message = record(r.result)?.message;
    throw failed(
      typeof message === 'string' && message
        ? message
        : `response.result.status was '${String(status ?? '')}', not 'Success'`,
    );
  }
  const objects = list(r.convertedObjects);
  if (objects.length !== expected)
    throw failure(`conversion webhook for ${what} returned ${objects.length} objects, expected ${expected}`);
  return objects;
}

/** What a converted object changed that it must keep (kind, name, namespace, uid), in kube's words, or undefined. */
function changedIdentity(original: KubeObject, c: JsonObject): string | undefined {
  const m = record(c.metadata) ?? {};
  const om = original.metadata ?? {};
  const pairs: Array<[string, unknown, unknown]> = [
    ['kind', original.kind, c.kind],
    ['name', om.name, m.name],
    ['namespace', om.namespace, m.namespace],
    ['UID', om.uid, m.uid],
  ];
  for (const [what, was, now] of pairs)
    if (String(was ?? '') !== String(now ?? ''))
      return `must have the same ${what}: ${String(was ?? '')} != ${String(now ?? '')}`;
  return undefined;
}
