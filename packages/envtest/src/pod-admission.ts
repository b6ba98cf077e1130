/**
 * What kube-apiserver's default admission plugins do to a new Pod, as a vanilla 1.25 server runs them:
 * - ServiceAccount (not for a kubelet's mirror pods): the pod runs as `default` unless it names an account, which must exist (403 otherwise); unless
 *   the pod or its account turns automounting off, each container (and init container) mounts a projected
 *   `kube-api-access-<5 chars>` volume at /var/run/secrets/kubernetes.io/serviceaccount — a bound token, the
 *   cluster's CA (`kube-root-ca.crt`) and the namespace — and the account's image pull secrets are the pod's if it
 *   has none;
 * - DefaultTolerationSeconds: the pod tolerates `not-ready` and `unreachable` nodes for 300 s unless it says
 *   otherwise;
 * - Priority: the pod's priority is its PriorityClass's value (a class that does not exist is a 403), the global
 *   default class's without one, else 0; its preemption policy the class's, else `PreemptLowerPriority`.
 */
import { randomInt } from 'node:crypto';
import { ApiError } from './status.js';
import type { KubeObject } from './types.js';
import { isRecord, list, type JsonObject } from './json.js';

type Obj = JsonObject;

/** What the plugins look up. */
export interface PodAdmissionLookups {
  serviceAccount(namespace: string, name: string): KubeObject | undefined;
  priorityClasses(): KubeObject[];
}

const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
/** kube's SimpleNameGenerator alphabet: no vowels, no look-alike digits. */
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
/** The bound token's lifetime kube gives the projected volume (an hour and 7 s: the "warn only" expiry). */
const TOKEN_EXPIRATION_SECONDS = 3607;
const TOLERATION_SECONDS = 300;

const isObj = isRecord;
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

function forbidden(name: string, reason: string): ApiError {
  return new ApiError(403, 'Forbidden', `pods "${name}" is forbidden: ${reason}`, { name, kind: 'pods' });
}

function admitServiceAccount(pod: KubeObject, spec: Obj, lookups: PodAdmissionLookups): void {
  const ns = String(pod.metadata?.namespace ?? '');
  const name = String(pod.metadata?.name ?? '');
  if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount || 'default';
  spec.serviceAccount = spec.serviceAccountName;
  const accountName = String(spec.serviceAccountName);
  const account = lookups.serviceAccount(ns, accountName);
  if (!account) {
    throw forbidden(
      name,
      `error looking up service account ${ns}/${accountName}: serviceaccount "${accountName}" not found`,
    );
  }
  if (
    (!Array.isArray(spec.imagePullSecrets) || !spec.imagePullSecrets.length) &&
    Array.isArray(account.imagePullSecrets) &&
    account.imagePullSecrets.length
  ) {
    spec.imagePullSecrets = structuredClone(account.imagePullSecrets);
  }
  // the pod's own setting wins over its account's
  const automount =
    typeof spec.automountServiceAccountToken === 'boolean'
      ? spec.automountServiceAccountToken
      : account.automountServiceAccountToken !== false;
  if (!automount) return;
  const volumes = objects(spec.volumes);
  const existing = volumes.find((v) => typeof v.name === 'string' && v.name.startsWith(TOKEN_VOLUME_PREFIX));
  let volumeName = existing?.name as string | undefined;
  if (!volumeName) {
    volumeName = TOKEN_VOLUME_PREFIX;
    for (let i = 0; i < 5; i++) volumeName += NAME_CHARS[randomInt(NAME_CHARS.length)];
  }
  let mounted = false;
  // a container that already mounts something at the token's path keeps it
  for (const c of [...objects(spec.initContainers), ...objects(spec.containers)]) {
    const mounts = objects(c.volumeMounts);
    if (mounts.some((m) => m.mountPath === TOKEN_MOUNT_PATH)) continue;
    c.volumeMounts = [...list(c.volumeMounts), { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
    mounted = true;
  }
  if (!existing && mounted) {
    spec.volumes = [
      ...list(spec.volumes),
      {
        name: volumeName,
        projected: {
          sources: [
            { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            {
              downwardAPI: {
                items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
              },
            },
          ],
          defaultMode: 0o644,
        },
      },
    ];
  }
}

function admitTolerations(spec: Obj): void {
  const tolerations = objects(spec.tolerations);
  const added: Obj[] = [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    // a toleration of the taint's key for NoExecute (or any effect) is the pod's own choice
    if (tolerations.some((t) => t.key === key && (t.effect === 'NoExecute' || !t.effect))) continue;
    added.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: TOLERATION_SECONDS });
  }
  if (added.length) spec.tolerations = [...list(spec.tolerations), ...added];
}

function admitPriority(pod: KubeObject, spec: Obj, lookups: PodAdmissionLookups): void {
  const name = String(pod.metadata?.name ?? '');
  const classes = lookups.priorityClasses();
  let priority = 0;
  let preemptionPolicy: unknown = 'PreemptLowerPriority';
  if (spec.priorityClassName) {
    const pc = classes.find((c) => c.metadata?.name === spec.priorityClassName);
    if (!pc) throw forbidden(name, `no PriorityClass with name ${String(spec.priorityClassName)} was found`);
    priority = Number(pc.value ?? 0);
    preemptionPolicy = pc.preemptionPolicy ?? preemptionPolicy;
  } else {
    // the global default with the lowest value, if any
    const defaults = classes
      .filter((c) => c.globalDefault === true)
      .sort((a, b) => Number(a.value ?? 0) - Number(b.value ?? 0));
    if (defaults[0]) {
      spec.priorityClassName = defaults[0].metadata?.name;
      priority = Number(defaults[0].value ?? 0);
      preemptionPolicy = defaults[0].preemptionPolicy ?? preemptionPolicy;
    }
  }
  if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
    throw forbidden(
      name,
      `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
    );
  }
  spec.priority = priority;
  if (spec.preemptionPolicy == null) spec.preemptionPolicy = preemptionPolicy;
}

/** Runs the admission plugins on a Pod being created, in kube's order; may refuse it (403). */
export function admitNewPod(pod: KubeObject, lookups: PodAdmissionLookups): void {
  const spec = isObj(pod.spec) ? pod.spec : {};
  pod.spec = spec;
  // a mirror pod (a kubelet's static pod) has no service account
  if (!(isObj(pod.metadata?.annotations) && 'kubernetes.io/config.mirror' in pod.metadata.annotations))
    admitServiceAccount(pod, spec, lookups);
  admitTolerations(spec);
  admitPriority(pod, spec, lookups);
}
