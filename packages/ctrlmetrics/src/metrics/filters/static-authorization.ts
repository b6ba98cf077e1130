/**
 * Static authorization, kube-rbac-proxy's idea for non-resource requests: rules naming a user (or groups), a path
 * and a verb that are allowed without a SubjectAccessReview. Authentication still happens (TokenReview); a request
 * no rule matches is decided by a SubjectAccessReview as before. Rules only allow, never deny.
 *
 * One deliberate difference from kube-rbac-proxy, where an empty field matches anything: here a rule must name who
 * (a user name and/or groups) and what (a path), so a half-written rule cannot open the endpoint to everyone.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { UserInfo } from './reviews.js';
import { CtrlmetricsError } from '../../util/errors.js';

/**
 * `js-yaml`, loaded only when a rules file is read (importing ctrlmetrics loads no YAML parser); the same parser
 * the kubeconfig reader uses, and lighter in a running process than the `yaml` package.
 */
function parseYaml(text: string): unknown {
  return (createRequire(import.meta.url)('js-yaml') as typeof import('js-yaml')).load(text);
}

/** A rule: `user` (by name, by any of `groups`, or both) may use `verb` on `path` without a SubjectAccessReview. */
export interface StaticAuthorizationRule {
  user: {
    /** The user name as authenticated, e.g. `system:serviceaccount:monitoring:prometheus`. */
    name?: string;
    /** Any one of these groups matches (with `name`, both must match). */
    groups?: string[];
  };
  /** A non-resource path, e.g. `/metrics`; a trailing `*` matches the prefix before it (as RBAC's nonResourceURLs). */
  path: string;
  /** The lower-cased HTTP method, e.g. `get` (default), or `*` for any. */
  verb?: string;
}

/** A rule set that cannot be used; the message says which rule and what to fix. */
export class StaticAuthorizationError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_STATIC_AUTHORIZATION';
  override name = 'StaticAuthorizationError';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks rules given in code or read from a file; throws {@link StaticAuthorizationError} naming the first bad one. */
export function validateStaticRules(rules: unknown, source = 'staticAuthorization'): StaticAuthorizationRule[] {
  if (!Array.isArray(rules)) throw new StaticAuthorizationError(`${source}: expected a list of rules`);
  return rules.map((r, i) => {
    const where = `${source}[${i}]`;
    if (!isObject(r)) throw new StaticAuthorizationError(`${where}: expected an object with user, path and verb`);
    const user = r.user;
    if (!isObject(user)) throw new StaticAuthorizationError(`${where}: user is required ({name: ..., groups: [...]})`);
    const name = user.name;
    const groups = user.groups;
    if (name !== undefined && (typeof name !== 'string' || name === ''))
      throw new StaticAuthorizationError(`${where}: user.name must be a non-empty string`);
    if (
      groups !== undefined &&
      (!Array.isArray(groups) || groups.length === 0 || groups.some((g) => typeof g !== 'string' || g === ''))
    ) {
      throw new StaticAuthorizationError(`${where}: user.groups must be a non-empty list of group names`);
    }
    if (name === undefined && groups === undefined) {
      throw new StaticAuthorizationError(
        `${where}: name the user (user.name) or groups (user.groups) the rule allows: a rule for anyone would bypass authorization`,
      );
    }
    if (typeof r.path !== 'string' || !r.path.startsWith('/'))
      throw new StaticAuthorizationError(`${where}: path must be a non-resource path starting with "/", e.g. /metrics`);
    if (r.resourceRequest === true)
      throw new StaticAuthorizationError(
        `${where}: resourceRequest rules are not supported: the metrics endpoint serves non-resource paths only`,
      );
    const verb = r.verb === undefined ? 'get' : r.verb;
    if (typeof verb !== 'string' || verb === '' || (verb !== '*' && verb !== verb.toLowerCase())) {
      throw new StaticAuthorizationError(`${where}: verb must be a lower-case HTTP method (get, post, …) or "*"`);
    }
    return {
      user: {
        ...(name !== undefined ? { name: name } : {}),
        ...(groups !== undefined ? { groups: groups as string[] } : {}),
      },
      path: r.path,
      verb,
    };
  });
}

/**
 * Reads a kube-rbac-proxy style configuration file (YAML or JSON): `authorization: {static: [rules]}`, or a bare
 * list of rules. Fields for resource requests (`namespace`, `resource`, …) are refused.
 */
export function loadStaticAuthorizationFile(file: string): StaticAuthorizationRule[] {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    // a YAML error carries a code frame after its first line: the first line says what and where
    throw new StaticAuthorizationError(
      `cannot read the static authorization file ${file}: ${String((err as Error).message)
        .split('\n')[0]
        .trim()}`,
      { cause: err },
    );
  }
  const rules = Array.isArray(doc)
    ? doc
    : isObject(doc) && isObject(doc.authorization)
      ? doc.authorization.static
      : undefined;
  if (rules === undefined)
    throw new StaticAuthorizationError(
      `${file}: expected authorization.static: [rules] (kube-rbac-proxy's layout) or a list of rules`,
    );
  return validateStaticRules(rules, file);
}

/** Whether a rule allows `user` to use `verb` on `path`. */
function matches(rule: StaticAuthorizationRule, user: UserInfo, path: string, verb: string): boolean {
  if (rule.user.name !== undefined && rule.user.name !== user.username) return false;
  if (rule.user.groups !== undefined && !rule.user.groups.some((g) => user.groups.includes(g))) return false;
  if (rule.verb !== '*' && rule.verb !== verb) return false;
  return rule.path.endsWith('*') ? path.startsWith(rule.path.slice(0, -1)) : rule.path === path;
}

/** True when some rule allows the request. */
export function staticallyAllowed(
  rules: readonly StaticAuthorizationRule[],
  user: UserInfo,
  path: string,
  verb: string,
): boolean {
  for (const r of rules) if (matches(r, user, path, verb)) return true;
  return false;
}
