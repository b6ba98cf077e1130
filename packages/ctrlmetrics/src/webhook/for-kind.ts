/**
 * Defaulting and validation webhooks for one kind (controller-runtime's `NewWebhookManagedBy(mgr, &T{})
 * .WithDefaulter(d).WithValidator(v)`): the paths controller-runtime names, and the handlers that call the user's
 * defaulter and validator as its custom defaulter and validator do.
 *
 * Errors: a thrown error that carries a Kubernetes status (a numeric `code` of 400 or more with a `reason`, as
 * {@link AdmissionDeniedError}, or a `KubeApiError`-like `status` and `reason`) denies with that status; any other
 * `Error` denies with 403 Forbidden and its message; an engine bug (`TypeError`, `ReferenceError`, `RangeError`,
 * as a reconciler's panic) is recovered: 500 `panic: … [recovered]`, counted in
 * `controller_runtime_webhook_panics_total`.
 */
import { isPanic } from '../controller/errors.js';
import { copyJson } from '../util/json-copy.js';
import {
  allowed,
  denied,
  errored,
  isPromiseLike,
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionStatus,
  withPatches,
  withWarnings,
} from './admission.js';
import { CtrlmetricsError } from '../util/errors.js';

/** An object as the API sends it: plain JSON. */
export type KubeJson = Record<string, unknown>;

/** Sets defaults on the object in place (controller-runtime's `Defaulter`). A defaulter gives no warnings. */
export interface Defaulter<T = KubeJson> {
  /** Sets what is missing; the webhook answers the difference as a JSON patch. */
  default(obj: T, req: AdmissionRequest<T>): void | Promise<void>;
}

/** Warnings for the user (kubectl prints them); nothing is no warnings. */
export type Warnings = string[] | void | undefined;

/** Validates creates, updates and deletes (controller-runtime's `Validator`); throw to deny. */
export interface Validator<T = KubeJson> {
  /** A create: throw (e.g. `AdmissionDeniedError`) to deny, return warnings to allow with them. */
  validateCreate?(obj: T, req: AdmissionRequest<T>): Warnings | Promise<Warnings>;
  /** An update, with the object as it was. */
  validateUpdate?(oldObj: T, obj: T, req: AdmissionRequest<T>): Warnings | Promise<Warnings>;
  /** A delete, with the object being deleted. */
  validateDelete?(obj: T, req: AdmissionRequest<T>): Warnings | Promise<Warnings>;
}

/** Options of a {@link Webhook}. */
export interface WebhookOptions<T = KubeJson> {
  /** The kind: `{ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached' }`. */
  for: { apiVersion: string; kind: string };
  defaulter?: Defaulter<T>;
  validator?: Validator<T>;
  /** Serve the defaulter here instead of `/mutate-…`. */
  defaultingPath?: string;
  /** Serve the validator here instead of `/validate-…`. */
  validatingPath?: string;
}

/** A denial with a Kubernetes status: its HTTP `status` (≥ 400), reason, message, and optionally the invalid fields. */
export class AdmissionDeniedError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_ADMISSION_DENIED';
  override name = 'AdmissionDeniedError';
  constructor(
    /** The HTTP status of the denial (≥ 400), the Status's `code` on the wire. */
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly details?: AdmissionStatus['details'],
  ) {
    super(message);
  }

  /** 422 Invalid naming the fields, as the API server words it: `Kind.group "name" is invalid: field: message`. */
  static invalid(
    kind: { group?: string; kind: string },
    name: string,
    causes: Array<{ field: string; message: string }>,
  ): AdmissionDeniedError {
    const qk = kind.group ? `${kind.kind}.${kind.group}` : kind.kind;
    const parts = causes.map((c) => `${c.field}: ${c.message}`);
    return new AdmissionDeniedError(
      422,
      'Invalid',
      `${qk} "${name}" is invalid: ${parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`}`,
      {
        name,
        group: kind.group ?? '',
        kind: kind.kind,
        causes: causes.map((c) => ({ reason: 'FieldValueInvalid', message: c.message, field: c.field })),
      },
    );
  }
}

/**
 * controller-runtime's webhook path for a kind: `/<prefix>-<group with dots as dashes>-<version>-<kind lower-cased>`
 * (the core group gives a double dash: `/mutate--v1-pod`).
 */
export function webhookPath(prefix: 'mutate' | 'validate', apiVersion: string, kind: string): string {
  const slash = apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  return `/${prefix}-${group.replaceAll('.', '-')}-${version}-${kind.toLowerCase()}`;
}

/** The status a thrown error denies with, or undefined when it carries none. */
function statusOf(err: unknown): AdmissionStatus | undefined {
  if (!(err instanceof Error)) return undefined;
  if (err instanceof AdmissionDeniedError) {
    return {
      metadata: {},
      status: 'Failure',
      message: err.message,
      reason: err.reason,
      ...(err.details ? { details: err.details } : {}),
      code: err.status,
    };
  }
  // an API error passed on from a call (KubeApiError: `status` and `reason`)
  const e = err as Error & { status?: unknown; reason?: unknown };
  if (typeof e.status === 'number' && e.status >= 400 && typeof e.reason === 'string' && e.reason) {
    return { metadata: {}, status: 'Failure', message: e.message, reason: e.reason, code: e.status };
  }
  return undefined;
}

/** The answer to a thrown error; an engine bug is re-thrown, for the server to answer as a panic. */
function denialOf(err: unknown, warnings: string[] = []): AdmissionResponse {
  if (isPanic(err)) throw err;
  const status = statusOf(err);
  const r = status ? { allowed: false, status } : denied(err instanceof Error ? err.message : String(err));
  return warnings.length ? withWarnings(r, warnings) : r;
}

type Compare = (from: object, to: object) => unknown[];
/** fast-json-patch's compare, loaded on the first defaulting request (a manager without webhooks never loads it). */
let loading: Promise<Compare> | undefined;
let loaded: Compare | undefined;
function compare(from: object, to: object): unknown[] | Promise<unknown[]> {
  // once loaded, called directly: no await per request on the admission path
  if (loaded) return loaded(from, to);
  loading ??= import('fast-json-patch').then((mod) => {
    // a CommonJS package: its functions are on the default export under ESM
    loaded = ((mod as unknown as { default?: typeof mod }).default?.compare ?? mod.compare) as Compare;
    return loaded;
  });
  return loading.then((fn) => fn(from, to));
}

/** The object of the request, or the error answer when it is missing or not an object. */
function objectOf<T>(raw: unknown): { obj: T } | { answer: AdmissionResponse } {
  if (raw === null || raw === undefined) return { answer: errored(400, 'there is no content to decode') };
  if (typeof raw !== 'object' || Array.isArray(raw)) return { answer: errored(400, 'the object is not a JSON object') };
  return { obj: raw as T };
}

function warningsOf(w: Warnings): string[] {
  return Array.isArray(w) ? w.filter((x): x is string => typeof x === 'string') : [];
}

/** The defaulting handler: DELETE allowed untouched; otherwise the JSON Patch from the object sent to the defaulted one. */
export function defaultingHandler<T extends object>(defaulter: Defaulter<T>): AdmissionHandler {
  return (req) => {
    if (req.operation === 'DELETE') return allowed();
    const decoded = objectOf<T>(req.object);
    if ('answer' in decoded) return decoded.answer;
    const sent = decoded.obj;
    const obj = copyJson(sent);
    // at once when the defaulter is synchronous: a promise only where one is given
    const patch = (): AdmissionResponse | Promise<AdmissionResponse> => {
      const patches = compare(sent, obj);
      return isPromiseLike(patches) ? patches.then(patchedOrAllowed) : patchedOrAllowed(patches);
    };
    let defaulted: void | Promise<void>;
    try {
      defaulted = defaulter.default(obj, req as unknown as AdmissionRequest<T>);
    } catch (err) {
      return denialOf(err);
    }
    return isPromiseLike(defaulted) ? Promise.resolve(defaulted).then(patch, (err) => denialOf(err)) : patch();
  };
}

function patchedOrAllowed(patches: unknown[]): AdmissionResponse {
  return patches.length ? withPatches(allowed(), patches) : allowed();
}

/** The validating handler: create, update (old object first) and delete; CONNECT allowed. Warnings kept on denials too. */
export function validatingHandler<T extends object>(validator: Validator<T>): AdmissionHandler {
  return (req) => {
    const r = req as unknown as AdmissionRequest<T>;
    let call: () => Warnings | Promise<Warnings>;
    switch (req.operation) {
      case 'CREATE': {
        const obj = objectOf<T>(req.object);
        if ('answer' in obj) return obj.answer;
        call = () => validator.validateCreate?.(obj.obj, r);
        break;
      }
      case 'UPDATE': {
        const obj = objectOf<T>(req.object);
        if ('answer' in obj) return obj.answer;
        const old = objectOf<T>(req.oldObject);
        if ('answer' in old) return old.answer;
        call = () => validator.validateUpdate?.(old.obj, obj.obj, r);
        break;
      }
      case 'DELETE': {
        // the object is null on DELETE: the stored one is oldObject
        const old = objectOf<T>(req.oldObject);
        if ('answer' in old) return old.answer;
        call = () => validator.validateDelete?.(old.obj, r);
        break;
      }
      case 'CONNECT':
        return allowed();
      default:
        return errored(400, `unknown operation ${JSON.stringify(req.operation ?? '')}`);
    }
    const deny = (err: unknown): AdmissionResponse => {
      const w = (err as { warnings?: unknown })?.warnings;
      return denialOf(err, Array.isArray(w) ? w.filter((x): x is string => typeof x === 'string') : []);
    };
    let result: Warnings | Promise<Warnings>;
    try {
      result = call();
    } catch (err) {
      return deny(err);
    }
    return isPromiseLike(result) ? Promise.resolve(result).then(allowedWith, deny) : allowedWith(result);
  };
}

function allowedWith(w: Warnings): AdmissionResponse {
  const warnings = warningsOf(w);
  return warnings.length ? withWarnings(allowed(), warnings) : allowed();
}

/**
 * Admission webhooks for one kind: a defaulter at `/mutate-…` and a validator at `/validate-…` (or the custom
 * paths). Add it to a manager, or register {@link Webhook.handlers} on a `WebhookServer` (`ctrlmetrics/webhook`) yourself.
 */
export class Webhook<T extends object = KubeJson> {
  readonly defaultingPath: string | undefined;
  readonly validatingPath: string | undefined;

  constructor(readonly opts: WebhookOptions<T>) {
    const { apiVersion, kind } = opts.for ?? {};
    if (!apiVersion || !kind) throw new TypeError('a Webhook needs for: { apiVersion, kind }');
    if (!opts.defaulter && !opts.validator)
      throw new TypeError(`the webhook for ${kind} needs a defaulter, a validator or both`);
    this.defaultingPath = opts.defaulter ? (opts.defaultingPath ?? webhookPath('mutate', apiVersion, kind)) : undefined;
    this.validatingPath = opts.validator
      ? (opts.validatingPath ?? webhookPath('validate', apiVersion, kind))
      : undefined;
  }

  /** The paths and handlers to register. */
  handlers(): Array<[string, AdmissionHandler]> {
    const out: Array<[string, AdmissionHandler]> = [];
    if (this.opts.defaulter && this.defaultingPath)
      out.push([this.defaultingPath, defaultingHandler(this.opts.defaulter)]);
    if (this.opts.validator && this.validatingPath)
      out.push([this.validatingPath, validatingHandler(this.opts.validator)]);
    return out;
  }
}
