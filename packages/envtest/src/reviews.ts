/**
 * The "virtual" resources: TokenRequest, TokenReview, SelfSubjectReview, SubjectAccessReview,
 * SelfSubjectAccessReview and LocalSubjectAccessReview.
 */
import type { Store } from './store.js';
import type { Authenticator } from './authn.js';
import type { Authorizer } from './authz.js';
import type { TokenSigner } from './sa-tokens.js';
import type { AuthzAttributes, UserInfo } from './rbac.js';
import { badRequest, conflict, invalid, notFound, type FieldCause } from './status.js';
import { kubeTime } from './objects.js';
import { isRecord as isObj, type JsonObject } from './json.js';

const MIN_EXPIRATION = 600;
const MAX_EXPIRATION = 2 ** 32;

/** Handles the review and token-request endpoints. */
export class Reviews {
  constructor(
    private readonly deps: {
      store: Store;
      authn: Authenticator;
      authz: Authorizer;
      signer: TokenSigner;
      apiAudiences: string[];
      now?: () => number;
    },
  ) {}

  /** `POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token`. */
  tokenRequest(ns: string, name: string, body: unknown): JsonObject {
    const req: JsonObject = isObj(body) ? body : {};
    if (req.kind !== undefined && req.kind !== 'TokenRequest')
      throw badRequest(`the kind in the data (${String(req.kind)}) does not match the expected kind (TokenRequest)`);
    // kube-apiserver 1.32's order: the body's name and namespace against the URL's, then the service account, then
    // the spec (validated after the name is filled in from the service account, but reported with an empty name)
    const meta = isObj(req.metadata) ? req.metadata : {};
    if (typeof meta.name === 'string' && meta.name !== '' && meta.name !== name) {
      throw invalid('TokenRequest', 'authentication.k8s.io', name, [
        {
          field: 'metadata.name',
          message: `Invalid value: ${JSON.stringify(meta.name)}: must match the service account name if specified`,
        },
      ]);
    }
    if (typeof meta.namespace === 'string' && meta.namespace !== '' && meta.namespace !== ns) {
      throw invalid('TokenRequest', 'authentication.k8s.io', name, [
        {
          field: 'metadata.namespace',
          message: `Invalid value: ${JSON.stringify(meta.namespace)}: must match the service account namespace if specified`,
        },
      ]);
    }
    const sa = this.deps.store.get('serviceaccounts', ns, name);
    if (!sa) throw notFound('serviceaccounts', '', name);
    const spec = isObj(req.spec) ? req.spec : {};
    const exp = spec.expirationSeconds ?? 3600;
    if (typeof exp !== 'number' || !Number.isInteger(exp)) {
      throw invalid('TokenRequest', 'authentication.k8s.io', '', [
        { field: 'spec.expirationSeconds', message: `Invalid value: ${JSON.stringify(exp)}: must be an integer` },
      ]);
    }
    if (exp < MIN_EXPIRATION) {
      throw invalid('TokenRequest', 'authentication.k8s.io', '', [
        {
          field: 'spec.expirationSeconds',
          message: `Invalid value: ${exp}: may not specify a duration less than 10 minutes`,
        },
      ]);
    }
    if (exp > MAX_EXPIRATION) {
      throw invalid('TokenRequest', 'authentication.k8s.io', '', [
        {
          field: 'spec.expirationSeconds',
          message: `Invalid value: ${exp}: may not specify a duration larger than 2^32 seconds`,
        },
      ]);
    }
    const audiences: string[] =
      Array.isArray(spec.audiences) && spec.audiences.length ? spec.audiences.map(String) : this.deps.apiAudiences;
    const boundSecret = this.boundSecret(ns, name, spec.boundObjectRef);
    const { token, claims } = this.deps.signer.issue({
      namespace: ns,
      name,
      uid: String(sa.metadata.uid),
      audiences,
      expirationSeconds: exp,
      now: this.deps.now?.(),
      boundSecret,
    });
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace: ns, creationTimestamp: kubeTime(claims.iat * 1000) },
      spec: { audiences, expirationSeconds: exp, boundObjectRef: spec.boundObjectRef ?? null },
      status: { token, expirationTimestamp: kubeTime(claims.exp * 1000) },
    };
  }

  /**
   * The object a TokenRequest binds its token to. Secrets are bound (the token dies with the Secret); Pods and Nodes
   * are kinds kube binds to but this authority does not store, so they are not found; other kinds are refused.
   */
  private boundSecret(ns: string, saName: string, ref: unknown): { name: string; uid: string } | undefined {
    if (ref === undefined || ref === null) return undefined;
    const r = isObj(ref) ? ref : {};
    const kind = String(r.kind ?? '');
    const refName = String(r.name ?? '');
    if (kind === 'Secret' && (r.apiVersion ?? 'v1') === 'v1') {
      const secret = this.deps.store.get('secrets', ns, refName);
      if (!secret) throw notFound('secrets', '', refName);
      if (r.uid && r.uid !== secret.metadata.uid) {
        throw conflict(
          'secrets',
          '',
          refName,
          `the UID in the bound object reference (${String(r.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
        );
      }
      return { name: refName, uid: String(secret.metadata.uid) };
    }
    if ((kind === 'Pod' || kind === 'Node') && (r.apiVersion ?? 'v1') === 'v1')
      throw notFound(kind === 'Pod' ? 'pods' : 'nodes', '', refName);
    throw badRequest(
      `cannot bind token for serviceaccount "${saName}" to object of type ${r.apiVersion ? `${String(r.apiVersion)}, ` : ''}Kind=${kind}`,
    );
  }

  /** `POST /apis/authentication.k8s.io/v1/tokenreviews`. */
  tokenReview(body: unknown): JsonObject {
    const req: JsonObject = isObj(body) ? body : {};
    const spec = isObj(req.spec) ? req.spec : {};
    if (typeof spec.token !== 'string' || spec.token.length === 0)
      throw badRequest('token is required for TokenReview in authentication');
    const audiences = Array.isArray(spec.audiences) ? spec.audiences.map(String) : undefined;
    const r = this.deps.authn.authenticate(spec.token, audiences);
    const status: JsonObject = r.authenticated
      ? { authenticated: true, user: userOut(r.user), audiences: r.audiences }
      : { user: {}, error: r.error };
    return {
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null, ...(isObj(req.metadata) ? req.metadata : {}) },
      spec,
      status,
    };
  }

  /** `POST /apis/authentication.k8s.io/v1/selfsubjectreviews` (`kubectl auth whoami`). */
  selfSubjectReview(user: UserInfo): JsonObject {
    return {
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: kubeTime() },
      status: { userInfo: userOut(user) },
    };
  }

  /**
   * `POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews` (`kubectl auth can-i --list`): the caller's RBAC rules
   * in a namespace, split into resource and non-resource rules as kube-apiserver lists them.
   */
  selfSubjectRulesReview(body: unknown, caller: UserInfo): JsonObject {
    const req: JsonObject = isObj(body) ? body : {};
    if (req.kind !== undefined && req.kind !== 'SelfSubjectRulesReview') {
      throw badRequest(
        `the kind in the data (${String(req.kind)}) does not match the expected kind (SelfSubjectRulesReview)`,
      );
    }
    const spec: JsonObject = isObj(req.spec) ? req.spec : {};
    const namespace = typeof spec.namespace === 'string' ? spec.namespace : '';
    if (!namespace) throw badRequest('no namespace on request');
    const { rules, errors } = this.deps.authz.rulesFor(caller, namespace);
    const resourceRules: JsonObject[] = [];
    const nonResourceRules: JsonObject[] = [];
    for (const r of rules) {
      if (!r) continue;
      if (Array.isArray(r.resources) && r.resources.length) {
        const rr: JsonObject = { verbs: r.verbs ?? [] };
        if (r.apiGroups?.length) rr.apiGroups = r.apiGroups;
        rr.resources = r.resources;
        if (r.resourceNames?.length) rr.resourceNames = r.resourceNames;
        resourceRules.push(rr);
      }
      if (Array.isArray(r.nonResourceURLs) && r.nonResourceURLs.length)
        nonResourceRules.push({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs });
    }
    const status: JsonObject = { resourceRules, nonResourceRules, incomplete: false };
    if (errors.length)
      status.evaluationError = [...new Set(errors)].length === 1 ? errors[0] : `[${[...new Set(errors)].join(', ')}]`;
    return {
      kind: 'SelfSubjectRulesReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { namespace },
      status,
    };
  }

  /** `POST .../subjectaccessreviews`, `selfsubjectaccessreviews` (user = caller) and `localsubjectaccessreviews`. */
  accessReview(
    kind: 'SubjectAccessReview' | 'SelfSubjectAccessReview' | 'LocalSubjectAccessReview',
    body: unknown,
    caller: UserInfo,
    ns?: string,
  ): JsonObject {
    const req: JsonObject = isObj(body) ? body : {};
    if (req.kind !== undefined && req.kind !== kind)
      throw badRequest(`the kind in the data (${String(req.kind)}) does not match the expected kind (${kind})`);
    const spec: JsonObject = isObj(req.spec) ? req.spec : {};
    const ra = isObj(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
    const nra = isObj(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
    const groups = Array.isArray(spec.groups) ? spec.groups.map(String) : [];
    // kube-apiserver 1.32's checks, all reported together; the error names no kind (the internal object's Kind is
    // empty when it is validated), hence `.authorization.k8s.io "" is invalid: …`
    const causes: FieldCause[] = [];
    if (ra && nra) {
      causes.push({
        field: 'spec.nonResourceAttributes',
        message: `Invalid value: ${goNonResourceAttributes(nra)}: cannot be specified in combination with resourceAttributes`,
      });
    }
    if (!ra && !nra)
      causes.push({
        field: 'spec.resourceAttributes',
        message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
      });
    if (kind !== 'SelfSubjectAccessReview' && !spec.user && groups.length === 0) {
      causes.push({
        field: 'spec.user',
        message: 'Invalid value: "": at least one of user or group must be specified',
      });
    }
    if (kind === 'LocalSubjectAccessReview') {
      if (ra && String(ra.namespace ?? '') !== ns) {
        causes.push({
          field: 'spec.resourceAttributes.namespace',
          message: `Invalid value: ${JSON.stringify(String(ra.namespace ?? ''))}: must match metadata.namespace`,
        });
      }
      if (nra)
        causes.push({
          field: 'spec.nonResourceAttributes',
          message: `Invalid value: ${goNonResourceAttributes(nra)}: disallowed on this kind of request`,
        });
    }
    if (causes.length) throw invalid('', 'authorization.k8s.io', '', causes);
    const user: UserInfo =
      kind === 'SelfSubjectAccessReview'
        ? caller
        : {
            username: String(spec.user ?? ''),
            uid: typeof spec.uid === 'string' ? spec.uid : undefined,
            groups,
            extra: isObj(spec.extra) ? extraOf(spec.extra) : undefined,
          };
    const attrs: AuthzAttributes = ra
      ? {
          user,
          verb: String(ra.verb ?? ''),
          resourceRequest: true,
          namespace: String(ra.namespace ?? ''),
          apiGroup: String(ra.group ?? ''),
          resource: String(ra.resource ?? ''),
          subresource: String(ra.subresource ?? ''),
          name: String(ra.name ?? ''),
        }
      : { user, verb: String(nra!.verb ?? ''), resourceRequest: false, path: String(nra!.path ?? '') };
    const d = this.deps.authz.authorize(attrs);
    const status: JsonObject = { allowed: d.allowed };
    if (d.reason) status.reason = d.reason;
    return {
      kind,
      apiVersion: 'authorization.k8s.io/v1',
      metadata: {
        creationTimestamp: null,
        ...(isObj(req.metadata) ? req.metadata : {}),
        ...(ns ? { namespace: ns } : {}),
      },
      spec,
      status,
    };
  }
}

/** A review's `spec.extra` as the authorizer takes it: each key's values as strings (a key without a list left out). */
function extraOf(extra: JsonObject): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(extra).flatMap(([k, v]) => (Array.isArray(v) ? [[k, v.map(String)] as const] : [])),
  );
}

/** `%#v` of kube's internal `authorization.NonResourceAttributes`, the value its validation errors show. */
function goNonResourceAttributes(nra: JsonObject): string {
  return `authorization.NonResourceAttributes{Path:${JSON.stringify(String(nra.path ?? ''))}, Verb:${JSON.stringify(String(nra.verb ?? ''))}}`;
}

function userOut(u: UserInfo): JsonObject {
  const out: JsonObject = { username: u.username };
  if (u.uid) out.uid = u.uid;
  out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length) out.extra = u.extra;
  return out;
}
