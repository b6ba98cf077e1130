/**
 * Admission webhooks as kube-apiserver runs them on a write: the stored Mutating/ValidatingWebhookConfigurations
 * decide which webhooks a request reaches; mutating webhooks are called one after another (configurations in name
 * order), their JSON patches applied, with one more round for `reinvocationPolicy: IfNeeded`; validating webhooks
 * are called in parallel and the first error wins. Failures follow each webhook's `failurePolicy`; denials,
 * warnings and errors reach the client in kube-apiserver's words.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'ctrlmetrics/log';
import type { Store } from './store.js';
import type { ResourceRegistry } from './resources.js';
import type { KubeObject, ResourceType } from './types.js';
import { isRecord, num, record, records, str, type JsonObject } from './json.js';
import { ApiError, notFound } from './status.js';
import { applyPatch } from './patch.js';
import type { UserInfo } from './rbac.js';
import type { LabelSelector } from './rbac.js';
import { labelSelectorMatches } from './rbac.js';
import type { CustomResourceConverter } from './cr-conversion.js';
import {
  isEmptySelector,
  matchedVersion,
  objectSelectorMatches,
  type AdmissionAttributes,
  type WebhookRule,
} from './webhook-match.js';
import { callWebhook, WebhookCallError, type ServiceResolver, type WebhookAnswer } from './webhook-call.js';

const GROUP = 'admissionregistration.k8s.io';
const MUTATING_KEY = `mutatingwebhookconfigurations.${GROUP}`;
const VALIDATING_KEY = `validatingwebhookconfigurations.${GROUP}`;

/** A webhook of a stored configuration (defaulted when it was stored). */
interface Hook {
  configuration: string;
  name: string;
  clientConfig: JsonObject;
  rules?: WebhookRule[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects?: string;
  timeoutSeconds?: number;
  reinvocationPolicy?: string;
}

/**
 * A stored configuration's webhook as the calls read it. It was defaulted and validated when the configuration was
 * written (webhook-configurations.ts), so its rules and selectors have their shapes; scalars are narrowed here.
 */
function hookOf(w: JsonObject, configuration: string): Hook {
  return {
    configuration,
    name: String(w.name),
    clientConfig: record(w.clientConfig) ?? {},
    rules: Array.isArray(w.rules) ? (w.rules as WebhookRule[]) : undefined,
    failurePolicy: str(w.failurePolicy),
    matchPolicy: str(w.matchPolicy),
    namespaceSelector: record(w.namespaceSelector),
    objectSelector: record(w.objectSelector),
    sideEffects: str(w.sideEffects),
    timeoutSeconds: num(w.timeoutSeconds),
    reinvocationPolicy: str(w.reinvocationPolicy),
  };
}

/** One write under admission: its attributes plus what the AdmissionReview carries besides them. */
export interface AdmissionRequest extends AdmissionAttributes {
  type: ResourceType;
  /** `''` when a create gets its name generated later (mutating webhooks see no name then). */
  name: string;
  user: UserInfo;
  dryRun: boolean;
  /** CreateOptions / UpdateOptions / DeleteOptions as performed. */
  options: JsonObject;
  /** The kind of the object sent when it is not the resource's own (a `scale` subresource sends autoscaling/v1 Scale). */
  objectKind?: { group: string; version: string; kind: string };
}

/** Total size of a request's warnings (runes), and the size each is cut to once that is exceeded, as kube. */
const WARNINGS_TOTAL_RUNES = 4096;
const WARNING_TRUNCATED_RUNES = 256;

/** Collects `Warning` header values as kube-apiserver's recorder does: deduplicated, valid text only, bounded. */
export class WarningRecorder {
  private readonly texts: string[] = [];
  private truncated = false;

  constructor(private readonly out: string[]) {}

  add(text: string): void {
    if (
      !text ||
      // eslint-disable-next-line no-control-regex
      /[\u0000-\u0008\u000a-\u001f\u007f]/.test(text) ||
      text.includes('\ufffd') ||
      this.texts.includes(text)
    )
      return;
    const runes = (s: string) => [...s].length;
    let total = this.texts.reduce((n, t) => n + runes(t), 0) + runes(text);
    if (total > WARNINGS_TOTAL_RUNES && !this.truncated) {
      this.truncated = true;
      for (let i = 0; i < this.texts.length; i++)
        this.texts[i] = [...this.texts[i]].slice(0, WARNING_TRUNCATED_RUNES).join('');
      total = this.texts.reduce((n, t) => n + runes(t), 0);
    }
    const next = this.truncated ? [...text].slice(0, WARNING_TRUNCATED_RUNES).join('') : text;
    if (this.truncated && total + runes(next) > WARNINGS_TOTAL_RUNES) return;
    this.texts.push(next);
    this.render();
  }

  private start = -1;

  private render(): void {
    if (this.start < 0) this.start = this.out.length;
    this.out.splice(this.start, this.out.length - this.start, ...this.texts.map((t) => `299 - ${JSON.stringify(t)}`));
  }
}

function internal(message: string): ApiError {
  // kube's NewInternalError: one cause with the message and no reason
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ message }] as Array<{ reason: string; message: string }>,
  });
}

/** kube's rejection of a denied request: the webhook's status, its code raised to at least 400, the message prefixed. */
function denial(name: string, status: WebhookAnswer['status']): ApiError {
  const s = status ?? {};
  const code = typeof s.code === 'number' && s.code >= 400 ? s.code : 400;
  const by = `admission webhook ${JSON.stringify(name)} denied the request`;
  const message = s.message ? `${by}: ${s.message}` : s.reason ? `${by}: ${s.reason}` : `${by} without explanation`;
  return new ApiError(
    code,
    String(s.reason ?? ''),
    message,
    s.details && typeof s.details === 'object' ? s.details : undefined,
  );
}

/** The admission webhooks of an authority. */
export class WebhookAdmission {
  constructor(
    private readonly store: Store,
    private readonly registry: ResourceRegistry,
    private readonly opts: { resolveService?: ServiceResolver; logger: Logger; converter?: CustomResourceConverter },
  ) {}

  /**
   * How an object goes to a webhook matched in another version than the request's (`matchPolicy: Equivalent`) and
   * comes back: converted by the CRD's conversion webhook when it has one (else only apiVersion changes, in review).
   */
  private conversionFor(
    r: AdmissionRequest,
    version: string,
  ):
    | {
        there: (o: KubeObject | null | undefined) => Promise<KubeObject | null>;
        back: (o: KubeObject) => Promise<KubeObject>;
      }
    | undefined {
    const c = this.opts.converter;
    if (version === r.version || !c?.webhookCrd(r.type)) return undefined;
    return {
      there: async (o) => (o ? (await c.convert(r.type, [o], version))[0] : null),
      back: async (o) => (await c.convert(r.type, [o], r.version))[0],
    };
  }

  /** Whether writes of this type may reach webhooks (some configuration exists; configurations never do). */
  applies(t: ResourceType): boolean {
    if (t.group === GROUP || t.virtual) return false;
    return this.store.list(MUTATING_KEY).length > 0 || this.store.list(VALIDATING_KEY).length > 0;
  }

  private hooks(key: string): Hook[] {
    const nameOf = (o: KubeObject) => o.metadata?.name ?? '';
    const configs = [...this.store.list(key)].sort((a, b) =>
      nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0,
    );
    return configs.flatMap((c) => records(c.webhooks).map((w) => hookOf(w, nameOf(c))));
  }

  /** Whether a webhook is called for a request, and in which version; throws when the namespace is missing. */
  private version(h: Hook, r: AdmissionRequest): string | undefined {
    if (!this.namespaceMatches(h.namespaceSelector, r)) return undefined;
    if (!objectSelectorMatches(h.objectSelector, r)) return undefined;
    const others = this.registry
      .all()
      .filter((x) => x.group === r.group && x.resource === r.resource)
      .map((x) => x.version);
    return matchedVersion(h, r, others);
  }

  private namespaceMatches(selector: LabelSelector | undefined, r: AdmissionRequest): boolean {
    const isNamespace = r.group === '' && r.resource === 'namespaces';
    if (!isNamespace && !r.type.namespaced) return true;
    if (isEmptySelector(selector)) return true;
    let labels: Record<string, string> | undefined;
    if (isNamespace && (r.operation === 'CREATE' || r.operation === 'UPDATE')) labels = r.object?.metadata?.labels;
    else {
      const ns = this.store.get('namespaces', undefined, r.namespace);
      if (!ns) throw notFound('namespaces', '', r.namespace);
      labels = ns.metadata.labels;
    }
    return labelSelectorMatches(selector!, labels ?? {});
  }

  private review(
    r: AdmissionRequest,
    version: string,
    object: KubeObject | null,
    oldObject: KubeObject | null | undefined,
  ): JsonObject {
    const gv = (v: string) => ({ group: r.group, version: v });
    const withVersion = (o: KubeObject | null) =>
      o && version !== r.version ? { ...o, apiVersion: r.group ? `${r.group}/${version}` : version } : o;
    const kind = this.registry.get(r.group, version, r.resource)?.kind ?? r.type.kind;
    const user: JsonObject = { username: r.user.username };
    if (r.user.uid) user.uid = r.user.uid;
    if (r.user.groups?.length) user.groups = r.user.groups;
    if (r.user.extra && Object.keys(r.user.extra).length) user.extra = r.user.extra;
    return {
      kind: 'AdmissionReview',
      apiVersion: 'admission.k8s.io/v1',
      request: {
        uid: randomUUID(),
        kind: r.objectKind ?? { ...gv(version), kind },
        resource: { ...gv(version), resource: r.resource },
        ...(r.subresource ? { subResource: r.subresource } : {}),
        requestKind: r.objectKind ?? { ...gv(r.version), kind: r.type.kind },
        requestResource: { ...gv(r.version), resource: r.resource },
        ...(r.subresource ? { requestSubResource: r.subresource } : {}),
        ...(r.name ? { name: r.name } : {}),
        ...(r.namespace ? { namespace: r.namespace } : {}),
        operation: r.operation,
        userInfo: user,
        object: withVersion(object),
        oldObject: withVersion(oldObject ?? null),
        dryRun: r.dryRun,
        options: r.options,
      },
    };
  }

  /**
   * Calls one webhook. Answers its verified answer, or undefined when it failed open; throws the client's error for
   * a failure under `Fail` and for a dry run it does not support.
   */
  private async call(
    h: Hook,
    r: AdmissionRequest,
    version: string,
    object: KubeObject | null,
    mutating: boolean,
    oldObject: KubeObject | null | undefined = r.oldObject,
  ): Promise<WebhookAnswer | undefined> {
    if (r.dryRun && h.sideEffects !== 'None' && h.sideEffects !== 'NoneOnDryRun') {
      if (!h.sideEffects) return this.failed(h, 'Webhook SideEffects is nil');
      throw new ApiError(400, 'BadRequest', `admission webhook ${JSON.stringify(h.name)} does not support dry run`);
    }
    const started = performance.now();
    try {
      const answer = await callWebhook({
        clientConfig: h.clientConfig,
        timeoutSeconds: h.timeoutSeconds ?? 10,
        review: this.review(r, version, object, oldObject),
        mutating,
        resolveService: this.opts.resolveService,
      });
      this.opts.logger.debug('called admission webhook', {
        webhook: h.name,
        configuration: h.configuration,
        operation: r.operation,
        allowed: answer.allowed,
        code: answer.allowed ? 200 : (answer.status?.code ?? 400),
        durationMs: Math.round(performance.now() - started),
      });
      return answer;
    } catch (err) {
      if (!(err instanceof WebhookCallError)) throw err;
      this.opts.logger.debug('called admission webhook', {
        webhook: h.name,
        configuration: h.configuration,
        operation: r.operation,
        error: err.message,
        durationMs: Math.round(performance.now() - started),
      });
      return this.failed(h, err.message);
    }
  }

  private failed(h: Hook, why: string): undefined {
    const text = `failed calling webhook ${JSON.stringify(h.name)}: ${why}`;
    if (h.failurePolicy === 'Ignore') {
      this.opts.logger.warn('Failed calling webhook, failing open', { webhook: h.name, error: text });
      return undefined;
    }
    this.opts.logger.error('Failed calling webhook, failing closed', { webhook: h.name, error: text });
    throw internal(text);
  }

  /**
   * Runs the mutating webhooks a request reaches and answers the object as they left it (`null` stays `null` for
   * a delete). Warnings go to `warnings`.
   */
  async mutate(r: AdmissionRequest, warnings: WarningRecorder): Promise<KubeObject | null> {
    const hooks = this.hooks(MUTATING_KEY);
    let object = r.object;
    const invoked = new Set<number>();
    const again = new Set<number>();
    for (let round = 0; round < 2; round++) {
      if (round === 1 && again.size === 0) break;
      for (let i = 0; i < hooks.length; i++) {
        if (round === 1 && !again.has(i)) continue;
        const h = hooks[i];
        const current = { ...r, object };
        const version = this.version(h, current);
        if (version === undefined) continue;
        const conv = this.conversionFor(r, version);
        const sent = conv ? await conv.there(object) : object;
        const answer = await this.call(
          h,
          current,
          version,
          sent,
          true,
          conv ? await conv.there(r.oldObject) : r.oldObject,
        );
        if (!answer) continue;
        for (const w of answer.warnings) warnings.add(w);
        if (!answer.allowed) throw denial(h.name, answer.status);
        const patched = this.patched(h, answer, sent);
        // a patch made in the webhook's version comes back converted to the request's
        const next = patched === sent ? object : conv && patched ? await conv.back(patched) : patched;
        if (round === 0) {
          if (next !== object && JSON.stringify(next) !== JSON.stringify(object)) for (const j of invoked) again.add(j);
          if (h.reinvocationPolicy === 'IfNeeded') invoked.add(i);
        }
        object = next;
      }
    }
    return object;
  }

  /** The object after a webhook's patch (the same object when it sent none). */
  private patched(h: Hook, answer: WebhookAnswer, object: KubeObject | null): KubeObject | null {
    if (!answer.patch) return object;
    if (answer.patchType !== 'JSONPatch')
      return this.failed(h, `unsupported patch type ${JSON.stringify(answer.patchType)}`) ?? object;
    let ops: unknown;
    try {
      ops = JSON.parse(Buffer.from(answer.patch, 'base64').toString('utf8'));
      if (!Array.isArray(ops))
        throw new Error(`json: cannot unmarshal ${typeof ops} into Go value of type jsonpatch.Patch`);
    } catch (err) {
      return this.failed(h, `received undecodable patch in webhook response: ${(err as Error).message}`) ?? object;
    }
    if (ops.length === 0) return object;
    if (object === null)
      throw internal(
        `admission webhook ${JSON.stringify(h.name)} attempted to modify the object, which is not supported for this operation`,
      );
    // a patch that does not apply fails the request whatever the failure policy says, as in kube
    try {
      const out: unknown = applyPatch('application/json-patch+json', object, ops);
      if (!isRecord(out)) throw new Error('the patched object is not an object');
      // its metadata is checked as a request's before the write goes on (checkMetadataShape)
      return out;
    } catch (err) {
      throw internal((err as { detail?: string }).detail ?? (err as Error).message);
    }
  }

  /** Runs the validating webhooks a request reaches, all at once; the first error to arrive is the request's. */
  async validate(r: AdmissionRequest, warnings: WarningRecorder): Promise<void> {
    const errors: unknown[] = [];
    const calls: Promise<void>[] = [];
    for (const h of this.hooks(VALIDATING_KEY)) {
      const version = this.version(h, r);
      if (version === undefined) continue;
      calls.push(
        (async () => {
          const conv = this.conversionFor(r, version);
          const answer = conv
            ? await this.call(h, r, version, await conv.there(r.object), false, await conv.there(r.oldObject))
            : await this.call(h, r, version, r.object, false);
          if (!answer) return;
          for (const w of answer.warnings) warnings.add(w);
          if (!answer.allowed) throw denial(h.name, answer.status);
        })().catch((err: unknown) => {
          errors.push(err);
        }),
      );
    }
    await Promise.all(calls);
    if (errors.length) throw errors[0];
  }
}
