/**
 * `ctrlmetrics grant`: binds the project's metrics-reader ClusterRole to a service account, idempotently, with
 * the same object `kubectl create clusterrolebinding NAME --clusterrole=R --serviceaccount=NS:SA` builds.
 */
import { KubeApiError, type KubeClient } from 'ctrlmetrics/client';
import { OpsError } from './errors.js';
import { apiError, isStatus } from './kube.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const CRB_PATH = `/apis/${RBAC_GROUP}/v1/clusterrolebindings`;
const CR_PATH = `/apis/${RBAC_GROUP}/v1/clusterroles`;

/** A ClusterRoleBinding as the API returns it (the fields this command reads). */
export interface ClusterRoleBinding {
  kind: 'ClusterRoleBinding';
  apiVersion: string;
  metadata: { name: string; creationTimestamp?: string | null; [k: string]: unknown };
  subjects?: Array<{ kind: string; name: string; namespace?: string; apiGroup?: string }>;
  roleRef: { apiGroup: string; kind: string; name: string };
}

/** The binding, with fields in the order kubectl prints them in JSON. */
export function buildBinding(
  name: string,
  clusterRole: string,
  sa: { namespace: string; name: string },
): ClusterRoleBinding {
  return {
    kind: 'ClusterRoleBinding',
    apiVersion: `${RBAC_GROUP}/v1`,
    metadata: { name, creationTimestamp: null },
    subjects: [{ kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace }],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: clusterRole },
  };
}

/** The default binding name: `<clusterrole>:<namespace>:<serviceaccount>` (unique per role and identity). */
export function defaultBindingName(clusterRole: string, sa: { namespace: string; name: string }): string {
  return `${clusterRole}:${sa.namespace}:${sa.name}`.slice(0, 253);
}

/**
 * Finds the metrics-reader ClusterRole when `--clusterrole` is not given: the only ClusterRole named
 * `metrics-reader` or `*-metrics-reader`, preferring `<project>-metrics-reader` when the service account lives in
 * `<project>-system`.
 */
export async function findReaderRole(client: KubeClient, saNamespace: string): Promise<string> {
  let names: string[];
  try {
    const list = await client.get<{ items: Array<{ metadata: { name: string } }> }>(CR_PATH, { timeoutMs: 15_000 });
    names = list.items
      .map((i) => i.metadata.name)
      .filter((n) => n === 'metrics-reader' || n.endsWith('-metrics-reader'));
  } catch (err) {
    throw apiError(err, 'cannot list clusterroles to find the metrics-reader role (pass --clusterrole)', client);
  }
  if (saNamespace.endsWith('-system')) {
    const preferred = `${saNamespace.slice(0, -'-system'.length)}-metrics-reader`;
    if (names.includes(preferred)) return preferred;
  }
  if (names.length === 1) return names[0];
  if (names.length === 0) {
    throw new OpsError(
      "no ClusterRole named *-metrics-reader exists: apply the project's RBAC (kubectl apply -k config/default) or pass --clusterrole",
    );
  }
  throw new OpsError(
    `several metrics-reader ClusterRoles exist (${names.sort().join(', ')}): pass --clusterrole <prefix>-metrics-reader`,
  );
}

/** What differs between an existing binding and the wanted one (empty when they are the same grant). */
export function bindingDifferences(existing: ClusterRoleBinding, wanted: ClusterRoleBinding): string[] {
  const diffs: string[] = [];
  const r = existing.roleRef;
  const w = wanted.roleRef;
  if (r.kind !== w.kind || r.name !== w.name || r.apiGroup !== w.apiGroup) {
    diffs.push(`roleRef is ${r.kind}/${r.name}, wanted ${w.kind}/${w.name}`);
  }
  const fmt = (s: { kind: string; name: string; namespace?: string }) =>
    `${s.kind} ${s.namespace ? s.namespace + '/' : ''}${s.name}`;
  const have = (existing.subjects ?? []).map(fmt);
  const want = (wanted.subjects ?? []).map(fmt);
  if (have.length !== want.length || have.some((s, i) => s !== want[i])) {
    diffs.push(`subjects are [${have.join(', ')}], wanted [${want.join(', ')}]`);
  }
  return diffs;
}

/** A ClusterRole's rules (the fields {@link grantsMetricsGet} reads). */
export interface ClusterRole {
  rules?: Array<{ verbs?: string[]; nonResourceURLs?: string[]; resources?: string[]; apiGroups?: string[] }> | null;
  aggregationRule?: unknown;
}

/**
 * Whether a rule of the role allows `get` on the non-resource URL `/metrics`, as RBAC matches them: the verb `get`
 * or `*`, and the URL `/metrics`, `*`, or a prefix ending in `*` (`/metrics*`, `/met*`).
 */
export function grantsMetricsGet(role: ClusterRole): boolean {
  return (role.rules ?? []).some(
    (r) =>
      (r.verbs ?? []).some((v) => v === 'get' || v === '*') &&
      (r.nonResourceURLs ?? []).some(
        (u) => u === '/metrics' || u === '*' || (u.endsWith('*') && '/metrics'.startsWith(u.slice(0, -1))),
      ),
  );
}

function describeRules(role: ClusterRole): string {
  const rules = (role.rules ?? []).map((r) =>
    `${(r.verbs ?? []).join(',')} ${(r.nonResourceURLs ?? r.resources ?? []).join(',')}`.trim(),
  );
  return rules.length ? rules.join('; ') : 'none';
}

/** Result of {@link applyGrant}. */
export interface GrantResult {
  status: 'created' | 'unchanged';
  binding: ClusterRoleBinding;
  /** Something to tell the user although the binding was made (e.g. an aggregated role that does not grant it yet). */
  warning?: string;
}

/** Creates the binding, or accepts an identical existing one; a conflicting one is an error that says what differs. */
export async function applyGrant(client: KubeClient, wanted: ClusterRoleBinding): Promise<GrantResult> {
  const name = wanted.metadata.name;
  const roleName = wanted.roleRef.name;
  let warning: string | undefined;
  try {
    const role = await client.get<ClusterRole>(`${CR_PATH}/${encodeURIComponent(roleName)}`, { timeoutMs: 15_000 });
    if (!grantsMetricsGet(role)) {
      const what = `clusterrole "${roleName}" does not allow get on /metrics (its rules: ${describeRules(role)})`;
      // an aggregated role's rules are filled in by the controller: they may come later
      if (role.aggregationRule)
        warning = `${what}; it aggregates other roles, so a scraper bound to it gets 403 until one of them grants it`;
      else {
        throw new OpsError(
          `${what}: a scraper bound to it would get 403. Bind the project's metrics-reader role (--clusterrole <prefix>-metrics-reader), ` +
            'or add the rule {nonResourceURLs: ["/metrics"], verbs: ["get"]} to it',
        );
      }
    }
  } catch (err) {
    if (err instanceof OpsError) throw err;
    if (isStatus(err, 404)) {
      throw new OpsError(
        `clusterrole "${roleName}" not found: apply the project's RBAC (kubectl apply -k config/default) or pass the right --clusterrole`,
      );
    }
    if (!isStatus(err, 403)) throw apiError(err, `cannot read clusterrole ${roleName}`, client);
    // may bind without being allowed to read roles: let the create decide
  }
  const path = `${CRB_PATH}/${encodeURIComponent(name)}`;
  const body = { ...wanted, metadata: { name } };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const existing = await client.get<ClusterRoleBinding>(path, { timeoutMs: 15_000 });
      const diffs = bindingDifferences(existing, wanted);
      if (diffs.length === 0) return { status: 'unchanged', binding: existing, warning };
      throw new OpsError(
        `clusterrolebinding "${name}" already exists and differs: ${diffs.join('; ')}. ` +
          `Choose another --name, or delete it first (kubectl delete clusterrolebinding ${name})`,
      );
    } catch (err) {
      if (!isStatus(err, 404)) throw apiError(err, `cannot read clusterrolebinding ${name}`, client);
    }
    try {
      const created = await client.create<ClusterRoleBinding>(CRB_PATH, body, { timeoutMs: 15_000 });
      return { status: 'created', binding: created, warning };
    } catch (err) {
      if (isStatus(err, 409)) continue; // created concurrently: compare with it
      if (err instanceof KubeApiError && err.status === 403) {
        throw new OpsError(
          `cannot create clusterrolebinding ${name}: forbidden (${err.message}); binding a ClusterRole needs create on clusterrolebindings and either the role's permissions or "bind" on it`,
        );
      }
      throw apiError(err, `cannot create clusterrolebinding ${name}`, client);
    }
  }
  throw new OpsError(`clusterrolebinding "${name}" keeps changing: try again`);
}

/**
 * Whether the service account exists (undefined when the caller may not tell). RBAC allows binding one ahead of
 * time, so the command only warns about a missing one.
 */
export async function serviceAccountExists(
  client: KubeClient,
  sa: { namespace: string; name: string },
): Promise<boolean | undefined> {
  try {
    await client.get(
      `/api/v1/namespaces/${encodeURIComponent(sa.namespace)}/serviceaccounts/${encodeURIComponent(sa.name)}`,
      { timeoutMs: 15_000 },
    );
    return true;
  } catch (err) {
    if (isStatus(err, 404)) return false;
    return undefined;
  }
}
