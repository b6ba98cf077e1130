/**
 * Decoding of Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`).
 *
 * kubectl 1.32's typed clients (`kubectl create namespace|serviceaccount|clusterrole|clusterrolebinding|role|
 * rolebinding|configmap|secret|service|deployment|job|cronjob|token`, `kubectl auth can-i|whoami`) send their bodies as protobuf and accept
 * JSON answers, with no fallback to JSON requests. The authority answers in JSON and decodes these bodies with the
 * field numbers of the Kubernetes `generated.proto` files for the kinds below. Unknown fields are skipped.
 */
import { badRequest, ApiError } from './status.js';
import type { KubeObject } from './types.js';
import { record, str, type JsonObject } from './json.js';

/** The 4-byte prefix of a Kubernetes protobuf envelope. */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

/** A field: JSON name, type (scalar, `map`, `bmap` (string → bytes), `xmap` (string → ExtraValue) or a message name). */
interface Field {
  n: string;
  t: string;
  rep?: boolean;
  /** A pointer field in Go: present on the wire only when set, so its zero value is kept. */
  opt?: boolean;
}

const s = (n: string, opt = false): Field => ({ n, t: 'string', opt });
const rs = (n: string): Field => ({ n, t: 'string', rep: true });
const m = (n: string, t: string, opt = false): Field => ({ n, t, opt });
const rm = (n: string, t: string): Field => ({ n, t, rep: true });

const SCHEMAS: Record<string, Record<number, Field>> = {
  Unknown: { 1: m('typeMeta', 'TypeMeta'), 2: { n: 'raw', t: 'bytes' }, 3: s('contentEncoding'), 4: s('contentType') },
  TypeMeta: { 1: s('apiVersion'), 2: s('kind') },
  ObjectMeta: {
    1: s('name'),
    2: s('generateName'),
    3: s('namespace'),
    5: s('uid'),
    6: s('resourceVersion'),
    7: { n: 'generation', t: 'int64' },
    8: m('creationTimestamp', 'Time'),
    11: { n: 'labels', t: 'map' },
    12: { n: 'annotations', t: 'map' },
    13: rm('ownerReferences', 'OwnerReference'),
    14: rs('finalizers'),
  },
  OwnerReference: {
    1: s('kind'),
    3: s('name'),
    4: s('uid'),
    5: s('apiVersion'),
    6: { n: 'controller', t: 'bool', opt: true },
    7: { n: 'blockOwnerDeletion', t: 'bool', opt: true },
  },
  Time: { 1: { n: 'seconds', t: 'int64' }, 2: { n: 'nanos', t: 'int32' } },
  LabelSelector: { 1: { n: 'matchLabels', t: 'map' }, 2: rm('matchExpressions', 'LabelSelectorRequirement') },
  LabelSelectorRequirement: { 1: s('key'), 2: s('operator'), 3: rs('values') },
  ObjectReference: {
    1: s('kind'),
    2: s('namespace'),
    3: s('name'),
    4: s('uid'),
    5: s('apiVersion'),
    6: s('resourceVersion'),
    7: s('fieldPath'),
  },
  LocalObjectReference: { 1: s('name') },
  IntOrString: { 1: { n: 'type', t: 'int64' }, 2: { n: 'intVal', t: 'int32' }, 3: s('strVal') },
  // core/v1
  Namespace: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'NamespaceSpec'), 3: m('status', 'NamespaceStatus') },
  NamespaceSpec: { 1: rs('finalizers') },
  NamespaceStatus: { 1: s('phase') },
  ServiceAccount: {
    1: m('metadata', 'ObjectMeta'),
    2: rm('secrets', 'ObjectReference'),
    3: { n: 'automountServiceAccountToken', t: 'bool', opt: true },
    4: rm('imagePullSecrets', 'LocalObjectReference'),
  },
  ConfigMap: {
    1: m('metadata', 'ObjectMeta'),
    2: { n: 'data', t: 'map' },
    3: { n: 'binaryData', t: 'bmap' },
    4: { n: 'immutable', t: 'bool', opt: true },
  },
  Secret: {
    1: m('metadata', 'ObjectMeta'),
    2: { n: 'data', t: 'bmap' },
    3: s('type'),
    4: { n: 'stringData', t: 'map' },
    5: { n: 'immutable', t: 'bool', opt: true },
  },
  Service: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'ServiceSpec') },
  ServiceSpec: {
    1: rm('ports', 'ServicePort'),
    2: { n: 'selector', t: 'map' },
    3: s('clusterIP'),
    4: s('type'),
    5: rs('externalIPs'),
    7: s('sessionAffinity'),
    10: s('externalName'),
  },
  ServicePort: {
    1: s('name'),
    2: s('protocol'),
    3: { n: 'port', t: 'int32' },
    4: m('targetPort', 'IntOrString'),
    5: { n: 'nodePort', t: 'int32' },
    6: s('appProtocol', true),
  },
  // apps/v1 (what `kubectl create deployment` sends)
  Deployment: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'DeploymentSpec') },
  DeploymentSpec: {
    1: { n: 'replicas', t: 'int32', opt: true },
    2: m('selector', 'LabelSelector'),
    3: m('template', 'PodTemplateSpec'),
    4: m('strategy', 'DeploymentStrategy'),
    5: { n: 'minReadySeconds', t: 'int32' },
    6: { n: 'revisionHistoryLimit', t: 'int32', opt: true },
    7: { n: 'paused', t: 'bool' },
    9: { n: 'progressDeadlineSeconds', t: 'int32', opt: true },
  },
  DeploymentStrategy: { 1: s('type'), 2: m('rollingUpdate', 'RollingUpdateDeployment', true) },
  RollingUpdateDeployment: { 1: m('maxUnavailable', 'IntOrString', true), 2: m('maxSurge', 'IntOrString', true) },
  PodTemplateSpec: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'PodSpec') },
  // kubectl create job / cronjob
  Job: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'JobSpec') },
  JobSpec: {
    1: { n: 'parallelism', t: 'int32', opt: true },
    2: { n: 'completions', t: 'int32', opt: true },
    3: { n: 'activeDeadlineSeconds', t: 'int64', opt: true },
    4: m('selector', 'LabelSelector', true),
    5: { n: 'manualSelector', t: 'bool', opt: true },
    6: m('template', 'PodTemplateSpec'),
    7: { n: 'backoffLimit', t: 'int32', opt: true },
    8: { n: 'ttlSecondsAfterFinished', t: 'int32', opt: true },
    9: s('completionMode', true),
    10: { n: 'suspend', t: 'bool', opt: true },
  },
  JobTemplateSpec: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'JobSpec') },
  CronJob: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'CronJobSpec') },
  CronJobSpec: {
    1: s('schedule'),
    2: { n: 'startingDeadlineSeconds', t: 'int64', opt: true },
    3: s('concurrencyPolicy'),
    4: { n: 'suspend', t: 'bool', opt: true },
    5: m('jobTemplate', 'JobTemplateSpec'),
    6: { n: 'successfulJobsHistoryLimit', t: 'int32', opt: true },
    7: { n: 'failedJobsHistoryLimit', t: 'int32', opt: true },
    8: s('timeZone', true),
  },
  PodSpec: {
    2: rm('containers', 'Container'),
    3: s('restartPolicy'),
    4: { n: 'terminationGracePeriodSeconds', t: 'int64', opt: true },
    6: s('dnsPolicy'),
    7: { n: 'nodeSelector', t: 'map' },
    8: s('serviceAccountName'),
    10: s('nodeName'),
    11: { n: 'hostNetwork', t: 'bool' },
    15: rm('imagePullSecrets', 'LocalObjectReference'),
    20: rm('initContainers', 'Container'),
  },
  Container: {
    1: s('name'),
    2: s('image'),
    3: rs('command'),
    4: rs('args'),
    5: s('workingDir'),
    6: rm('ports', 'ContainerPort'),
    7: rm('env', 'EnvVar'),
    8: m('resources', 'ResourceRequirements'),
    13: s('terminationMessagePath'),
    14: s('imagePullPolicy'),
    20: s('terminationMessagePolicy'),
  },
  ContainerPort: {
    1: s('name'),
    2: { n: 'hostPort', t: 'int32' },
    3: { n: 'containerPort', t: 'int32' },
    4: s('protocol'),
    5: s('hostIP'),
  },
  EnvVar: { 1: s('name'), 2: s('value') },
  ResourceRequirements: {},
  // rbac.authorization.k8s.io/v1
  ClusterRole: {
    1: m('metadata', 'ObjectMeta'),
    2: rm('rules', 'PolicyRule'),
    3: m('aggregationRule', 'AggregationRule', true),
  },
  Role: { 1: m('metadata', 'ObjectMeta'), 2: rm('rules', 'PolicyRule') },
  AggregationRule: { 1: rm('clusterRoleSelectors', 'LabelSelector') },
  PolicyRule: {
    1: rs('verbs'),
    2: rs('apiGroups'),
    3: rs('resources'),
    4: rs('resourceNames'),
    5: rs('nonResourceURLs'),
  },
  ClusterRoleBinding: { 1: m('metadata', 'ObjectMeta'), 2: rm('subjects', 'Subject'), 3: m('roleRef', 'RoleRef') },
  RoleBinding: { 1: m('metadata', 'ObjectMeta'), 2: rm('subjects', 'Subject'), 3: m('roleRef', 'RoleRef') },
  Subject: { 1: s('kind'), 2: s('apiGroup'), 3: s('name'), 4: s('namespace') },
  RoleRef: { 1: s('apiGroup'), 2: s('kind'), 3: s('name') },
  // authentication.k8s.io/v1
  TokenRequest: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'TokenRequestSpec') },
  TokenRequestSpec: {
    1: rs('audiences'),
    3: m('boundObjectRef', 'BoundObjectReference', true),
    4: { n: 'expirationSeconds', t: 'int64', opt: true },
  },
  BoundObjectReference: { 1: s('kind'), 2: s('apiVersion'), 3: s('name'), 4: s('uid') },
  TokenReview: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'TokenReviewSpec') },
  TokenReviewSpec: { 1: s('token'), 2: rs('audiences') },
  SelfSubjectReview: { 1: m('metadata', 'ObjectMeta') },
  // authorization.k8s.io/v1
  SubjectAccessReview: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'SubjectAccessReviewSpec') },
  LocalSubjectAccessReview: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'SubjectAccessReviewSpec') },
  SubjectAccessReviewSpec: {
    1: m('resourceAttributes', 'ResourceAttributes', true),
    2: m('nonResourceAttributes', 'NonResourceAttributes', true),
    3: s('user'),
    4: rs('groups'),
    5: { n: 'extra', t: 'xmap' },
    6: s('uid'),
  },
  SelfSubjectAccessReview: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'SelfSubjectAccessReviewSpec') },
  SelfSubjectAccessReviewSpec: {
    1: m('resourceAttributes', 'ResourceAttributes', true),
    2: m('nonResourceAttributes', 'NonResourceAttributes', true),
  },
  SelfSubjectRulesReview: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'SelfSubjectRulesReviewSpec') },
  SelfSubjectRulesReviewSpec: { 1: s('namespace') },
  ResourceAttributes: {
    1: s('namespace'),
    2: s('verb'),
    3: s('group'),
    4: s('version'),
    5: s('resource'),
    6: s('subresource'),
    7: s('name'),
  },
  NonResourceAttributes: { 1: s('path'), 2: s('verb') },
  ExtraValue: { 1: rs('items') },
  MapEntry: { 1: s('key'), 2: s('value') },
  BytesMapEntry: { 1: s('key'), 2: { n: 'value', t: 'bytes' } },
  ExtraMapEntry: { 1: s('key'), 2: m('value', 'ExtraValue') },
};

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw badRequest('malformed protobuf body: truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 70n) throw badRequest('malformed protobuf body: varint too long');
    }
  }
  bytes(): Buffer {
    const len = Number(this.varint());
    if (this.pos + len > this.buf.length) throw badRequest('malformed protobuf body: truncated field');
    const b = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return b;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw badRequest(`malformed protobuf body: unsupported wire type ${wire}`);
  }
}

function toSigned(v: bigint, bits: 32 | 64): number {
  return Number(BigInt.asIntN(bits, v));
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false || v === undefined;
}

/** A message's JSON form: an object, or a string or number for Time and IntOrString (undefined for a zero Time). */
function decodeMessage(type: string, buf: Buffer): unknown {
  const schema = SCHEMAS[type];
  if (!schema) throw new Error(`no protobuf schema for ${type}`);
  const r = new Reader(buf);
  const out: JsonObject = {};
  while (!r.done) {
    const key = Number(r.varint());
    const fieldNo = key >>> 3;
    const wire = key & 7;
    const f = schema[fieldNo];
    if (!f) {
      r.skip(wire);
      continue;
    }
    let v: unknown;
    switch (f.t) {
      case 'string':
        v = r.bytes().toString('utf8');
        break;
      case 'bytes':
        v = Buffer.from(r.bytes());
        break;
      case 'bool':
        v = r.varint() !== 0n;
        break;
      case 'int32':
        v = toSigned(r.varint(), 32);
        break;
      case 'int64':
        v = toSigned(r.varint(), 64);
        break;
      case 'map':
      case 'bmap':
      case 'xmap': {
        const entry =
          record(
            decodeMessage(f.t === 'map' ? 'MapEntry' : f.t === 'bmap' ? 'BytesMapEntry' : 'ExtraMapEntry', r.bytes()),
          ) ?? {};
        const map = (out[f.n] ??= {}) as Record<string, unknown>;
        const val = entry.value;
        map[String(entry.key ?? '')] =
          f.t === 'map'
            ? String(val ?? '')
            : f.t === 'bmap'
              ? ((val as Buffer | undefined) ?? Buffer.alloc(0)).toString('base64')
              : (record(val)?.items ?? []);
        continue;
      }
      default:
        if (wire !== 2) throw badRequest(`malformed protobuf body: field ${f.n} of ${type} is not a message`);
        v = decodeMessage(f.t, r.bytes());
    }
    if (f.rep) ((out[f.n] ??= []) as unknown[]).push(v);
    else out[f.n] = v;
  }
  return finish(type, out, schema);
}

/** Turns the decoded message into its JSON form: zero values of non-pointer fields dropped, Time and IntOrString converted. */
function finish(type: string, o: JsonObject, schema: Record<number, Field>): unknown {
  if (type === 'Time') {
    if (!o.seconds && !o.nanos) return undefined;
    return new Date(Number(o.seconds ?? 0) * 1000).toISOString().replace('.000Z', 'Z');
  }
  if (type === 'IntOrString') return o.type === 1 ? (o.strVal ?? '') : (o.intVal ?? 0);
  for (const f of Object.values(schema)) {
    if (f.opt || f.rep) continue;
    if (isZero(o[f.n])) delete o[f.n];
  }
  for (const [k, v] of Object.entries(o)) if (v === undefined) delete o[k];
  return o;
}

/** Decodes a `k8s\0`-prefixed protobuf body into the JSON object (with apiVersion and kind). */
export function decodeProtobufObject(buf: Buffer): KubeObject {
  if (buf.length < 4 || !buf.subarray(0, 4).equals(PROTOBUF_MAGIC))
    throw badRequest('the protobuf request body does not start with the Kubernetes magic number');
  const unknown = record(decodeMessage('Unknown', buf.subarray(4))) ?? {};
  const tm = record(unknown.typeMeta) ?? {};
  const kind = str(tm.kind) ?? '';
  if (!SCHEMAS[kind] || ['Unknown', 'TypeMeta', 'ObjectMeta', 'Time'].includes(kind)) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the authority decodes protobuf bodies only for Namespace, ServiceAccount, ConfigMap, Secret, Service, Deployment, Job, CronJob, ClusterRole(Binding), Role(Binding), TokenRequest, TokenReview and the access reviews; send ${kind || 'this object'} as JSON (kubectl create -f / apply -f do)`,
    );
  }
  const raw = (unknown.raw as Buffer | undefined) ?? Buffer.alloc(0);
  const obj = record(decodeMessage(kind, raw)) ?? {};
  // typed as a request body is: the write path checks its metadata before anything reads it (checkMetadataShape)
  return { apiVersion: str(tm.apiVersion), kind, ...obj };
}
