/**
 * AdmissionReview in and out, as controller-runtime's admission webhook handles it over HTTP: the body is read up
 * to 7 MiB, must be `Content-Type: application/json` and decode as an AdmissionReview (`admission.k8s.io/v1`, or
 * `v1beta1` decoded alike); the handler's response is completed with the request's uid and a status (code 200
 * when none), and written back with the request's apiVersion and kind. Every answer is HTTP 200: a failure is
 * the code inside `response.status`, and one found before the request decoded carries an empty uid.
 */

/** The `userInfo` of an admission request. */
export interface AdmissionUserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** `request` of an AdmissionReview (admission.k8s.io/v1). */
export interface AdmissionRequest<T = Record<string, unknown>> {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  // the four operations kube-apiserver sends, spelled out for editors; any other string passes through
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | string;
  userInfo: AdmissionUserInfo;
  /** The object as sent; null on DELETE. */
  object?: T | null;
  /** The object as stored; null on CREATE. */
  oldObject?: T | null;
  dryRun?: boolean;
  options?: Record<string, unknown>;
}

/** `metav1.Status` inside an admission response. */
export interface AdmissionStatus {
  metadata?: Record<string, unknown>;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
  code?: number;
}

/** What a handler answers: allowed or not, why, and for a mutating webhook a JSON Patch. */
export interface AdmissionResponse {
  allowed: boolean;
  status?: AdmissionStatus;
  /** RFC 6902 operations; sent base64-encoded with `patchType: JSONPatch` when there is at least one. */
  patches?: unknown[];
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/** The wire form of `response`. */
interface WireResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patch?: string;
  patchType?: 'JSONPatch';
  auditAnnotations?: Record<string, string>;
  warnings?: string[];
}

/** A handler of admission requests: an answer for each, or a throw (counted as a panic and answered 500). */
export type AdmissionHandler = (req: AdmissionRequest) => AdmissionResponse | Promise<AdmissionResponse>;

/** controller-runtime's body limit: the read stops at 7 MiB, and a body that fills it is refused. */
export const MAX_ADMISSION_BODY_BYTES = 7 * 1024 * 1024;

/** Allowed; the message, when given, goes in the status. */
export function allowed(message = ''): AdmissionResponse {
  return { allowed: true, status: { metadata: {}, ...(message ? { message } : {}), code: 200 } };
}

/** Denied with 403 Forbidden and the message. */
export function denied(message: string): AdmissionResponse {
  return { allowed: false, status: { metadata: {}, ...(message ? { message } : {}), reason: 'Forbidden', code: 403 } };
}

/** Refused with `code` and the message, no reason (controller-runtime's `Errored`). */
export function errored(code: number, message: string): AdmissionResponse {
  return { allowed: false, status: { metadata: {}, message, code } };
}

/** Allowed with these JSON Patch operations. */
export function patched(patches: unknown[], message = ''): AdmissionResponse {
  return withPatches(allowed(message), patches);
}

// The answers of the admission path are built as object literals: on V8 11 an object made by spreading another
// and then adding a property (`{ ...r, patches }`) stayed alive across young-generation collections, a few hundred
// KB per collection at thousands of answers a second, which made each collection long enough to show in the
// latency tail.

/** An answer of only `allowed` and `status` (as {@link allowed} and {@link denied} make), with these patches. */
export function withPatches(r: AdmissionResponse, patches: unknown[]): AdmissionResponse {
  return { allowed: r.allowed, status: r.status, patches };
}

/** An answer of only `allowed` and `status`, with these warnings. */
export function withWarnings(r: AdmissionResponse, warnings: string[]): AdmissionResponse {
  return { allowed: r.allowed, status: r.status, warnings };
}

/** An answer on the wire: always HTTP 200, this body (a JSON line). */
export interface AdmissionAnswer {
  body: string;
  /** The uid echoed ('' when the request never decoded). */
  uid: string;
  /** True when the handler threw (a panic, in controller-runtime's terms). */
  panicked: boolean;
  /** What the handler threw, when it panicked: logged with its stack, as a reconciler's panic is. */
  panic?: unknown;
}

function encode(apiVersion: string | undefined, kind: string | undefined, response: WireResponse): string {
  const review = apiVersion || kind ? { kind, apiVersion, response } : { response };
  return `${JSON.stringify(review)}\n`;
}

/** An error found before the request decoded: no apiVersion, no kind, an empty uid. */
function early(code: number, message: string): AdmissionAnswer {
  const r = errored(code, message);
  return {
    body: encode(undefined, undefined, { uid: '', allowed: false, status: r.status }),
    uid: '',
    panicked: false,
  };
}

/**
 * Answers one admission HTTP request: `body` is what was read (`truncated` when the 7 MiB limit was reached),
 * `contentType` the request's header. The answer comes back at once when the handler answers at once (a promise
 * only when it returns one): every promise a request passes through costs the server's throughput.
 */
export function answerAdmission(
  body: Buffer | undefined,
  truncated: boolean,
  contentType: string | undefined,
  handler: AdmissionHandler,
): AdmissionAnswer | Promise<AdmissionAnswer> {
  if (!body || body.length === 0) return early(400, 'request body is empty');
  if (truncated) return early(413, `request entity is too large; limit is ${MAX_ADMISSION_BODY_BYTES} bytes`);
  if (contentType !== 'application/json')
    return early(400, `contentType=${contentType ?? ''}, expected application/json`);
  let review: { apiVersion?: unknown; kind?: unknown; request?: unknown };
  try {
    review = JSON.parse(body.toString('utf8')) as typeof review;
  } catch (err) {
    return early(400, `couldn't decode the AdmissionReview: ${(err as Error).message}`);
  }
  if (!review || typeof review !== 'object' || Array.isArray(review))
    return early(400, "couldn't decode the AdmissionReview: not a JSON object");
  const apiVersion =
    typeof review.apiVersion === 'string' && review.apiVersion ? review.apiVersion : 'admission.k8s.io/v1';
  const kind = typeof review.kind === 'string' && review.kind ? review.kind : 'AdmissionReview';
  if (apiVersion !== 'admission.k8s.io/v1' && apiVersion !== 'admission.k8s.io/v1beta1') {
    return early(400, `no kind "${kind}" is registered for version "${apiVersion}"`);
  }
  if (kind !== 'AdmissionReview') return early(400, `no kind "${kind}" is registered for version "${apiVersion}"`);
  const request = (
    review.request && typeof review.request === 'object' && !Array.isArray(review.request) ? review.request : {}
  ) as AdmissionRequest;
  const uid = typeof request.uid === 'string' ? request.uid : '';
  const answer = (response: AdmissionResponse): AdmissionAnswer => {
    if (!response || typeof response !== 'object' || typeof response.allowed !== 'boolean')
      return panicAnswer(new TypeError('the admission handler returned no response'));
    return { body: encode(apiVersion, kind, complete(uid, response)), uid, panicked: false };
  };
  // a handler that throws or rejects panicked, in controller-runtime's terms: answered 500, logged with its stack
  const panicAnswer = (err: unknown): AdmissionAnswer => {
    const r = errored(500, `panic: ${err instanceof Error ? err.message : String(err)} [recovered]`);
    return { body: encode(apiVersion, kind, complete(uid, r)), uid, panicked: true, panic: err };
  };
  let result: AdmissionResponse | Promise<AdmissionResponse>;
  try {
    result = handler(request);
  } catch (err) {
    return panicAnswer(err);
  }
  return isPromiseLike(result) ? Promise.resolve(result).then(answer, panicAnswer) : answer(result);
}

/** Whether `v` is a promise or another thenable (what `await` would wait for). */
export function isPromiseLike<T>(v: T | PromiseLike<T>): v is PromiseLike<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** controller-runtime's `Complete`: the uid echoed, a status with code 200 when none, the patch encoded. */
function complete(uid: string, r: AdmissionResponse): WireResponse {
  const status: AdmissionStatus = { metadata: {}, ...r.status };
  if (!status.code) status.code = 200;
  const out: WireResponse = { uid, allowed: r.allowed, status };
  if (r.patches && r.patches.length > 0) {
    out.patch = Buffer.from(JSON.stringify(r.patches)).toString('base64');
    out.patchType = 'JSONPatch';
  }
  if (r.auditAnnotations && Object.keys(r.auditAnnotations).length > 0) out.auditAnnotations = r.auditAnnotations;
  if (r.warnings && r.warnings.length > 0) out.warnings = r.warnings;
  return out;
}
