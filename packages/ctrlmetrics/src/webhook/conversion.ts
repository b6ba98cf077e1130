/**
 * Conversion webhooks (controller-runtime's `pkg/webhook/conversion` with the hub-and-spoke model): the API server
 * posts a ConversionReview (`apiextensions.k8s.io/v1`) to `/convert` with objects and the `desiredAPIVersion`, and
 * each object is converted through its kind's hub version — a spoke goes to the hub with `toHub`, the hub to a spoke
 * with `fromHub`, a spoke to another spoke through the hub. Every answer to a review that decoded is HTTP 200: a
 * failed conversion is `result.status: Failure` with the message, and no objects.
 */
import { isPanic } from '../controller/errors.js';
import type { KubeJson } from './for-kind.js';
import { scalarText } from '../util/scalar-text.js';

/** How one spoke version converts to and from the hub. Both get a copy: change it and return it, or build anew. */
export interface SpokeConversion<Spoke extends object = KubeJson, Hub extends object = KubeJson> {
  /** The spoke object in the hub version (its metadata is kept when the result has none). */
  toHub(obj: Spoke): Hub | Promise<Hub>;
  /** The hub object in the spoke version. */
  fromHub(hub: Hub): Spoke | Promise<Spoke>;
}

/** Options of a {@link ConversionWebhook}. */
export interface ConversionWebhookOptions {
  /** The API group: `cache.example.com`. */
  group: string;
  /** The kind: `Memcached`. */
  kind: string;
  /** The hub version (kubebuilder's storage version, `+kubebuilder:storageversion`): `v1`. */
  hub: string;
  /** Every other version, by name, with its conversions: `{ v1alpha1: { toHub, fromHub } }`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spokes: Record<string, SpokeConversion<any, any>>;
}

/** The path controller-runtime serves conversions at (and kubebuilder's CRD conversion patch points to). */
export const CONVERSION_PATH = '/convert';

/**
 * Conversions of one kind between its versions through a hub. Add it to a manager (`mgr.add(...)`, which serves
 * `/convert` for every kind added), or use {@link ConversionRegistry} with a server of your own.
 */
export class ConversionWebhook {
  constructor(readonly opts: ConversionWebhookOptions) {
    const { group, kind, hub, spokes } = opts ?? ({} as ConversionWebhookOptions);
    if (!group || !kind || !hub)
      throw new TypeError(
        'a ConversionWebhook needs group, kind and hub: { group: "cache.example.com", kind: "Memcached", hub: "v1", spokes: { … } }',
      );
    if (!spokes || typeof spokes !== 'object' || Object.keys(spokes).length === 0)
      throw new TypeError(
        `the conversion webhook for ${kind}.${group} needs at least one spoke version besides the hub ${hub}`,
      );
    if (hub in spokes)
      throw new TypeError(`the conversion webhook for ${kind}.${group}: ${hub} is the hub and cannot also be a spoke`);
    for (const [v, s] of Object.entries(spokes)) {
      if (typeof s?.toHub !== 'function' || typeof s?.fromHub !== 'function')
        throw new TypeError(
          `the conversion webhook for ${kind}.${group}: spoke ${v} needs toHub and fromHub functions`,
        );
    }
  }

  /** `group/kind` this webhook converts. */
  get groupKind(): string {
    return `${this.opts.group}/${this.opts.kind}`;
  }

  /** Converts one object (already known to be of this group and kind) to `version`. */
  async convert(obj: KubeJson, fromVersion: string, toVersion: string): Promise<KubeJson> {
    const { group, kind, hub, spokes } = this.opts;
    const gvk = (v: string) => `${group}/${v}, Kind=${kind}`;
    if (fromVersion === toVersion) throw new Error(`conversion is not allowed between same type ${gvk(fromVersion)}`);
    const spokeOf = (v: string) => {
      const s = Object.hasOwn(spokes, v) ? spokes[v] : undefined;
      if (v !== hub && !s)
        throw new Error(
          `${gvk(v)} is not convertible: ${kind} has the hub ${hub} and the spokes ${Object.keys(spokes).sort().join(', ')}`,
        );
      return s;
    };
    const from = spokeOf(fromVersion);
    const to = spokeOf(toVersion);
    const hubObj = from ? restoreMeta(await from.toHub(structuredClone(obj)), obj) : structuredClone(obj);
    const out = to ? restoreMeta(await to.fromHub(structuredClone(hubObj)), obj) : hubObj;
    if (!out || typeof out !== 'object' || Array.isArray(out))
      throw new Error(`converting ${gvk(fromVersion)} to ${toVersion} gave no object`);
    return { ...out, apiVersion: `${group}/${toVersion}`, kind };
  }
}

/** A converter's result with the source's metadata when it returned none (as a Go ConvertTo copies ObjectMeta). */
function restoreMeta(result: unknown, source: KubeJson): KubeJson {
  if (!result || typeof result !== 'object' || Array.isArray(result)) return result as KubeJson;
  const r = result as KubeJson;
  return r.metadata === undefined ? { ...r, metadata: structuredClone(source.metadata) } : r;
}

/** The conversion webhooks served at one path, by group and kind. */
export class ConversionRegistry {
  private readonly byGroupKind = new Map<string, ConversionWebhook>();

  /** Adds a kind's conversions; a second webhook for the same kind is an error. */
  add(webhook: ConversionWebhook): void {
    if (this.byGroupKind.has(webhook.groupKind))
      throw new Error(`a conversion webhook for ${webhook.opts.kind}.${webhook.opts.group} is already registered`);
    this.byGroupKind.set(webhook.groupKind, webhook);
  }

  /** The kinds registered, as `group/Kind`. */
  get kinds(): string[] {
    return [...this.byGroupKind.keys()];
  }

  /** Converts one object to `desiredAPIVersion`; throws with the reason it cannot. */
  async convert(obj: unknown, desiredAPIVersion: string): Promise<KubeJson> {
    if (!obj || typeof obj !== 'object' || Array.isArray(obj))
      throw new Error('an object to convert is not a JSON object');
    const o = obj as KubeJson;
    const [srcGroup, srcVersion] = splitApiVersion(scalarText(o.apiVersion));
    const kind = scalarText(o.kind);
    if (!srcVersion || !kind)
      throw new Error("an object to convert has no apiVersion or kind: Object 'Kind' is missing");
    const [dstGroup, dstVersion] = splitApiVersion(desiredAPIVersion);
    if (!dstVersion) throw new Error(`invalid desiredAPIVersion ${JSON.stringify(desiredAPIVersion)}`);
    if (srcGroup !== dstGroup)
      throw new Error(
        `src ${srcGroup}/${srcVersion}, Kind=${kind} and dst ${dstGroup}/${dstVersion}, Kind=${kind} does not belong to same API Group`,
      );
    const webhook = this.byGroupKind.get(`${srcGroup}/${kind}`);
    if (!webhook)
      throw new Error(
        `no kind "${kind}" is registered for version "${srcGroup}/${srcVersion}": this webhook converts ${this.kinds.join(', ') || 'no kinds'}`,
      );
    return webhook.convert(o, srcVersion, dstVersion);
  }
}

function splitApiVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

/** An HTTP answer to a conversion request. */
export interface ConversionAnswer {
  status: number;
  /** The JSON body ('' for a 400: controller-runtime answers an undecodable review with an empty body). */
  body: string;
  /** True when a converter failed with an engine bug (a TypeError and the like), for the log. */
  panicked: boolean;
  /** The failure message, when the conversion failed. */
  failure?: string;
}

/**
 * Answers one ConversionReview body: 400 with an empty body when it does not decode or has no request; otherwise
 * 200 with the converted objects (`result.status: Success`), or with the first failure's message
 * (`result.status: Failure`, `convertedObjects` null). The review's apiVersion and kind are echoed.
 */
export async function answerConversion(
  body: Buffer | undefined,
  registry: ConversionRegistry,
): Promise<ConversionAnswer> {
  const bad: ConversionAnswer = { status: 400, body: '', panicked: false };
  if (!body || body.length === 0) return bad;
  let review: { apiVersion?: unknown; kind?: unknown; request?: unknown };
  try {
    review = JSON.parse(body.toString('utf8')) as typeof review;
  } catch {
    return bad;
  }
  if (!review || typeof review !== 'object' || Array.isArray(review)) return bad;
  const request = review.request as
    { uid?: unknown; desiredAPIVersion?: unknown; objects?: unknown } | null | undefined;
  if (!request || typeof request !== 'object' || Array.isArray(request)) return bad;
  if (request.objects !== undefined && request.objects !== null && !Array.isArray(request.objects)) return bad;
  const uid = typeof request.uid === 'string' ? request.uid : '';
  const head = {
    ...(typeof review.kind === 'string' ? { kind: review.kind } : {}),
    ...(typeof review.apiVersion === 'string' ? { apiVersion: review.apiVersion } : {}),
  };
  const desired = typeof request.desiredAPIVersion === 'string' ? request.desiredAPIVersion : '';
  const converted: KubeJson[] = [];
  try {
    for (const obj of (request.objects ?? []) as unknown[]) converted.push(await registry.convert(obj, desired));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const response = { uid, convertedObjects: null, result: { metadata: {}, status: 'Failure', message } };
    return {
      status: 200,
      body: `${JSON.stringify({ ...head, response })}\n`,
      panicked: isPanic(err),
      failure: message,
    };
  }
  const response = { uid, convertedObjects: converted, result: { metadata: {}, status: 'Success' } };
  return { status: 200, body: `${JSON.stringify({ ...head, response })}\n`, panicked: false };
}
