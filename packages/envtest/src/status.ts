/**
 * Kubernetes `Status` errors as the API server answers them (code, reason, message, details).
 */

/** A `metav1.Status` failure. */
export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    retryAfterSeconds?: number;
    causes?: Array<{ reason: string; message: string; field?: string }>;
  };
  code: number;
}

/** An error the API answers with a `Status` body. */
export class ApiError extends Error {
  override name = 'ApiError';
  /** `metadata.continue` of the answer (a 410 to an expired continue token carries one that goes on inconsistently). */
  listContinue?: string;
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusBody['details'],
  ) {
    super(message);
  }

  toStatus(): StatusBody {
    // in the order of Go's metav1.Status fields (pretty-printed answers show it), `details` before `code`
    // Go's omitempty: empty strings are not serialized (core-group errors carry no `group`)
    const details =
      this.details &&
      (Object.fromEntries(
        Object.entries(this.details).filter(([, v]) => v !== '' && v !== undefined),
      ) as StatusBody['details']);
    const metadata = this.listContinue ? { continue: this.listContinue } : {};
    const reason = this.reason ? { reason: this.reason } : {};
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata,
      status: 'Failure',
      message: this.message,
      ...reason,
      ...(details ? { details } : {}),
      code: this.code,
    } as StatusBody;
  }
}

/** `resource.group` as kube prints a qualified resource (`configmaps`, `clusterroles.rbac.authorization.k8s.io`). */
export function qualifiedResource(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

export function notFound(resource: string, group: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(resource, group)} "${name}" not found`, {
    name,
    group,
    kind: resource,
  });
}

export function alreadyExists(resource: string, group: string, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(resource, group)} "${name}" already exists`, {
    name,
    group,
    kind: resource,
  });
}

export function conflict(resource: string, group: string, name: string, why: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(resource, group)} "${name}": ${why}`,
    { name, group, kind: resource },
  );
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export function methodNotAllowed(
  message = 'the server does not allow this method on the requested resource',
): ApiError {
  return new ApiError(405, 'MethodNotAllowed', message);
}

export function unsupportedMediaType(contentType: string): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/merge-patch+json, application/strategic-merge-patch+json, application/json-patch+json, application/apply-patch+yaml (got ${JSON.stringify(contentType)})`,
  );
}

export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

/** One invalid field, as in `metav1.StatusCause`. */
export interface FieldCause {
  field: string;
  message: string;
  /** `FieldValueInvalid` (default), `FieldValueRequired`, `FieldValueNotSupported`, … */
  reason?: string;
}

/** 422 Invalid with kube's message shape: `Kind.group "name" is invalid: [field: Invalid value: ..., ...]`. */
export function invalid(kind: string, group: string, name: string, causes: FieldCause[]): ApiError {
  const qk = group ? `${kind}.${group}` : kind;
  const parts = causes.map((c) => `${c.field}: ${c.message}`);
  const msg = `${qk} "${name}" is invalid: ${parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`}`;
  return new ApiError(422, 'Invalid', msg, {
    name,
    group,
    kind,
    causes: causes.map((c) => ({ reason: c.reason ?? 'FieldValueInvalid', message: c.message, field: c.field })),
  });
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`);
}
