/**
 * The "virtual" resources — TokenReview, SelfSubjectReview, the access reviews — and a ServiceAccount's `token`
 * subresource: create only, answered from the authority's authentication and authorization, nothing stored.
 */
import type { ServerResponse } from 'node:http';
import type { JsonObject } from '../json.js';
import type { UserInfo } from '../rbac.js';
import type { RequestInfo } from '../requestinfo.js';
import { notFoundPath, send, sendWritten } from '../responses.js';
import type { Reviews } from '../reviews.js';
import type { ServerDeps } from '../server-deps.js';
import { methodNotAllowed } from '../status.js';
import type { ResourceType } from '../types.js';

/** Each review resource's answer to a create (`ns` set for the namespaced LocalSubjectAccessReview). */
const REVIEWS: Readonly<
  Record<string, (reviews: Reviews, body: unknown, user: UserInfo, ns: string | undefined) => JsonObject>
> = {
  tokenreviews: (r, body) => r.tokenReview(body),
  selfsubjectreviews: (r, _body, user) => r.selfSubjectReview(user),
  subjectaccessreviews: (r, body, user) => r.accessReview('SubjectAccessReview', body, user),
  selfsubjectaccessreviews: (r, body, user) => r.accessReview('SelfSubjectAccessReview', body, user),
  selfsubjectrulesreviews: (r, body, user) => r.selfSubjectRulesReview(body, user),
  localsubjectaccessreviews: (r, body, user, ns) => {
    if (!ns) throw methodNotAllowed();
    return r.accessReview('LocalSubjectAccessReview', body, user, ns);
  },
};

/** A `POST` to a review resource, answered 201 with the review and its status. */
export async function review(
  d: ServerDeps,
  res: ServerResponse,
  t: ResourceType,
  ns: string | undefined,
  info: RequestInfo,
  method: string,
  user: UserInfo,
  body: () => Promise<unknown>,
): Promise<void> {
  if (method !== 'POST' || info.name) throw methodNotAllowed();
  const b = await body();
  const answer = Object.hasOwn(REVIEWS, t.resource) ? REVIEWS[t.resource] : undefined;
  if (!answer) throw notFoundPath();
  return send(res, 201, answer(d.reviews, b, user, ns));
}

/** `POST .../serviceaccounts/{name}/token`: a TokenRequest for the ServiceAccount. */
export async function serviceAccountToken(
  d: ServerDeps,
  res: ServerResponse,
  ns: string | undefined,
  info: RequestInfo,
  method: string,
  body: () => Promise<unknown>,
): Promise<void> {
  if (method !== 'POST') throw methodNotAllowed();
  return sendWritten(d, res, 201, d.reviews.tokenRequest(ns ?? '', info.name, await body()));
}
