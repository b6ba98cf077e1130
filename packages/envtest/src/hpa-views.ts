/**
 * `autoscaling/v1` HorizontalPodAutoscalers as kube-apiserver serves them: the objects of `autoscaling/v2`, stored
 * once, seen through v1's narrower type. v1 has one target, `targetCPUUtilizationPercentage` (a v2 `Resource`
 * metric on `cpu` with a `Utilization` target), and one current figure; what v1 cannot say travels in annotations,
 * as kube's conversion keeps it, so that an object read in v1 and written back loses nothing: the other metrics
 * (`autoscaling.alpha.kubernetes.io/metrics`, in v1's metric shape, from v2beta1), the current metrics
 * (`…/current-metrics`), the conditions (`…/conditions`) and the scaling behavior (`…/behavior`, v2's shape).
 * Written in v1, these annotations turn back into fields and are not stored.
 */
import { badRequest } from './status.js';
import { record, type JsonObject } from './json.js';
// the type alone: resources.ts imports these conversions
import type { KubeObject } from './types.js';

type Obj = JsonObject;

const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const CURRENT_METRICS = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
const ROUND_TRIP = [METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR];

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An object with the given keys in this order, leaving out those whose value is undefined (Go's omitempty). */
function struct(fields: Array<[string, unknown]>): Obj {
  const out: Obj = {};
  for (const [k, v] of fields) if (v !== undefined) out[k] = v;
  return out;
}

/** A v2 metric on CPU utilization: the one target v1 has a field for. */
function isCpuUtilization(m: Obj): boolean {
  return (
    m.type === 'Resource' &&
    isObj(m.resource) &&
    m.resource.name === 'cpu' &&
    isObj(m.resource.target) &&
    m.resource.target.averageUtilization != null
  );
}

// ---- v2 → v1 (reads) ----

/** A v2 MetricSpec in v1's shape (v2beta1's: `targetAverageValue`, `metricName`, …). */
function metricSpecToV1(m: Obj): Obj {
  const t = (x: unknown): Obj => (isObj(x) ? x : {});
  const o = t(m.object);
  const p = t(m.pods);
  const r = t(m.resource);
  const c = t(m.containerResource);
  const e = t(m.external);
  return struct([
    ['type', m.type],
    [
      'object',
      m.object
        ? struct([
            ['target', o.describedObject ?? {}],
            ['metricName', t(o.metric).name ?? ''],
            ['targetValue', t(o.target).value ?? '0'],
            ['selector', t(o.metric).selector],
            ['averageValue', t(o.target).averageValue],
          ])
        : undefined,
    ],
    [
      'pods',
      m.pods
        ? struct([
            ['metricName', t(p.metric).name ?? ''],
            ['targetAverageValue', t(p.target).averageValue ?? '0'],
            ['selector', t(p.metric).selector],
          ])
        : undefined,
    ],
    [
      'resource',
      m.resource
        ? struct([
            ['name', r.name ?? ''],
            ['targetAverageUtilization', t(r.target).averageUtilization],
            ['targetAverageValue', t(r.target).averageValue],
          ])
        : undefined,
    ],
    [
      'containerResource',
      m.containerResource
        ? struct([
            ['name', c.name ?? ''],
            ['targetAverageUtilization', t(c.target).averageUtilization],
            ['targetAverageValue', t(c.target).averageValue],
            ['container', c.container ?? ''],
          ])
        : undefined,
    ],
    [
      'external',
      m.external
        ? struct([
            ['metricName', t(e.metric).name ?? ''],
            ['metricSelector', t(e.metric).selector],
            ['targetValue', t(e.target).value],
            ['targetAverageValue', t(e.target).averageValue],
          ])
        : undefined,
    ],
  ]);
}

/** A v2 MetricStatus in v1's shape. */
function metricStatusToV1(m: Obj): Obj {
  const t = (x: unknown): Obj => (isObj(x) ? x : {});
  const o = t(m.object);
  const p = t(m.pods);
  const r = t(m.resource);
  const c = t(m.containerResource);
  const e = t(m.external);
  return struct([
    ['type', m.type],
    [
      'object',
      m.object
        ? struct([
            ['target', o.describedObject ?? {}],
            ['metricName', t(o.metric).name ?? ''],
            ['currentValue', t(o.current).value ?? '0'],
            ['selector', t(o.metric).selector],
            ['averageValue', t(o.current).averageValue],
          ])
        : undefined,
    ],
    [
      'pods',
      m.pods
        ? struct([
            ['metricName', t(p.metric).name ?? ''],
            ['currentAverageValue', t(p.current).averageValue ?? '0'],
            ['selector', t(p.metric).selector],
          ])
        : undefined,
    ],
    [
      'resource',
      m.resource
        ? struct([
            ['name', r.name ?? ''],
            ['currentAverageUtilization', t(r.current).averageUtilization],
            ['currentAverageValue', t(r.current).averageValue ?? '0'],
          ])
        : undefined,
    ],
    [
      'containerResource',
      m.containerResource
        ? struct([
            ['name', c.name ?? ''],
            ['currentAverageUtilization', t(c.current).averageUtilization],
            ['currentAverageValue', t(c.current).averageValue ?? '0'],
            ['container', c.container ?? ''],
          ])
        : undefined,
    ],
    [
      'external',
      m.external
        ? struct([
            ['metricName', t(e.metric).name ?? ''],
            ['metricSelector', t(e.metric).selector],
            ['currentValue', t(e.current).value ?? '0'],
            ['currentAverageValue', t(e.current).averageValue],
          ])
        : undefined,
    ],
  ]);
}

/** A stored (autoscaling/v2) HPA as autoscaling/v1 shows it. */
export function hpaV1FromV2(stored: KubeObject): KubeObject {
  const spec: Obj = isObj(stored.spec) ? stored.spec : {};
  const status: Obj = isObj(stored.status) ? stored.status : {};
  const metrics: Obj[] = Array.isArray(spec.metrics) ? spec.metrics.filter(isObj) : [];
  const current: Obj[] = Array.isArray(status.currentMetrics) ? status.currentMetrics.filter(isObj) : [];
  const conditions: Obj[] = Array.isArray(status.conditions) ? status.conditions.filter(isObj) : [];
  const cpu = metrics.find(isCpuUtilization);
  const others = metrics.filter((m) => !isCpuUtilization(m));
  const currentCpu = current.find(
    (m) => m.type === 'Resource' && isObj(m.resource) && m.resource.name === 'cpu' && isObj(m.resource.current),
  );

  const metadata: Obj = { ...stored.metadata };
  const annotations: Obj = {};
  for (const [k, v] of Object.entries(isObj(metadata.annotations) ? metadata.annotations : {}))
    if (!ROUND_TRIP.includes(k)) annotations[k] = v;
  // Go's encoding/json writes the annotations' values; a map's keys come out sorted (kubeEncoded sorts them)
  if (others.length) annotations[METRICS] = JSON.stringify(others.map(metricSpecToV1));
  if (current.length) annotations[CURRENT_METRICS] = JSON.stringify(current.map(metricStatusToV1));
  if (isObj(spec.behavior)) annotations[BEHAVIOR] = JSON.stringify(spec.behavior);
  if (conditions.length) {
    annotations[CONDITIONS] = JSON.stringify(
      conditions.map((c) =>
        struct([
          ['type', c.type],
          ['status', c.status],
          ['lastTransitionTime', c.lastTransitionTime ?? null],
          ['reason', c.reason],
          ['message', c.message],
        ]),
      ),
    );
  }
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;

  return struct([
    ['kind', 'HorizontalPodAutoscaler'],
    ['apiVersion', 'autoscaling/v1'],
    ['metadata', metadata],
    [
      'spec',
      struct([
        ['scaleTargetRef', spec.scaleTargetRef ?? { kind: '', name: '' }],
        ['minReplicas', spec.minReplicas],
        ['maxReplicas', spec.maxReplicas ?? 0],
        ['targetCPUUtilizationPercentage', record(record(cpu?.resource)?.target)?.averageUtilization],
      ]),
    ],
    [
      'status',
      struct([
        ['observedGeneration', status.observedGeneration],
        ['lastScaleTime', status.lastScaleTime],
        // v1's counts are not omitempty: Go writes them as 0
        ['currentReplicas', status.currentReplicas ?? 0],
        ['desiredReplicas', status.desiredReplicas ?? 0],
        [
          'currentCPUUtilizationPercentage',
          record(record(currentCpu?.resource)?.current)?.averageUtilization ?? undefined,
        ],
      ]),
    ],
  ]);
}

// ---- v1 → v2 (writes) ----

/** A round-trip annotation's list, or a 400 in the words of a decoding error. */
function annotationList(annotations: Obj, key: string): Obj[] | undefined {
  const text = annotations[key];
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(text));
  } catch (err) {
    throw badRequest(
      `HorizontalPodAutoscaler in version "v1" cannot be handled as a HorizontalPodAutoscaler: the ${key} annotation is not JSON: ${(err as Error).message}`,
    );
  }
  if (!Array.isArray(parsed) || !parsed.every(isObj)) {
    throw badRequest(
      `HorizontalPodAutoscaler in version "v1" cannot be handled as a HorizontalPodAutoscaler: json: cannot unmarshal ${Array.isArray(parsed) ? 'a non-object item' : typeof parsed} of the ${key} annotation into a list`,
    );
  }
  return parsed;
}

/** A v1 MetricSpec (v2beta1's shape) as v2's, with the target type kube's conversion infers. */
function metricSpecFromV1(m: Obj): Obj {
  const t = (x: unknown): Obj => (isObj(x) ? x : {});
  const metric = (name: unknown, selector: unknown) =>
    struct([
      ['name', name ?? ''],
      ['selector', selector],
    ]);
  const o = t(m.object);
  const p = t(m.pods);
  const r = t(m.resource);
  const c = t(m.containerResource);
  const e = t(m.external);
  return struct([
    ['type', m.type],
    [
      'object',
      m.object
        ? struct([
            ['describedObject', o.target ?? {}],
            [
              'target',
              struct([
                ['type', o.averageValue == null ? 'Value' : 'AverageValue'],
                ['value', o.targetValue],
                ['averageValue', o.averageValue],
              ]),
            ],
            ['metric', metric(o.metricName, o.selector)],
          ])
        : undefined,
    ],
    [
      'pods',
      m.pods
        ? struct([
            ['metric', metric(p.metricName, p.selector)],
            [
              'target',
              struct([
                ['type', 'AverageValue'],
                ['averageValue', p.targetAverageValue],
              ]),
            ],
          ])
        : undefined,
    ],
    [
      'resource',
      m.resource
        ? struct([
            ['name', r.name ?? ''],
            [
              'target',
              struct([
                ['type', r.targetAverageUtilization == null ? 'AverageValue' : 'Utilization'],
                ['averageValue', r.targetAverageValue],
                ['averageUtilization', r.targetAverageUtilization],
              ]),
            ],
          ])
        : undefined,
    ],
    [
      'containerResource',
      m.containerResource
        ? struct([
            ['name', c.name ?? ''],
            [
              'target',
              struct([
                ['type', c.targetAverageUtilization == null ? 'AverageValue' : 'Utilization'],
                ['averageValue', c.targetAverageValue],
                ['averageUtilization', c.targetAverageUtilization],
              ]),
            ],
            ['container', c.container ?? ''],
          ])
        : undefined,
    ],
    [
      'external',
      m.external
        ? struct([
            ['metric', metric(e.metricName, e.metricSelector)],
            [
              'target',
              struct([
                ['type', e.targetValue == null ? 'AverageValue' : 'Value'],
                ['value', e.targetValue],
                ['averageValue', e.targetAverageValue],
              ]),
            ],
          ])
        : undefined,
    ],
  ]);
}

/** A v1 MetricStatus as v2's. */
function metricStatusFromV1(m: Obj): Obj {
  const t = (x: unknown): Obj => (isObj(x) ? x : {});
  const metric = (name: unknown, selector: unknown) =>
    struct([
      ['name', name ?? ''],
      ['selector', selector],
    ]);
  const o = t(m.object);
  const p = t(m.pods);
  const r = t(m.resource);
  const c = t(m.containerResource);
  const e = t(m.external);
  return struct([
    ['type', m.type],
    [
      'object',
      m.object
        ? struct([
            ['metric', metric(o.metricName, o.selector)],
            [
              'current',
              struct([
                ['value', o.currentValue],
                ['averageValue', o.averageValue],
              ]),
            ],
            ['describedObject', o.target ?? {}],
          ])
        : undefined,
    ],
    [
      'pods',
      m.pods
        ? struct([
            ['metric', metric(p.metricName, p.selector)],
            ['current', struct([['averageValue', p.currentAverageValue]])],
          ])
        : undefined,
    ],
    [
      'resource',
      m.resource
        ? struct([
            ['name', r.name ?? ''],
            [
              'current',
              struct([
                ['averageValue', r.currentAverageValue],
                ['averageUtilization', r.currentAverageUtilization],
              ]),
            ],
          ])
        : undefined,
    ],
    [
      'containerResource',
      m.containerResource
        ? struct([
            ['name', c.name ?? ''],
            [
              'current',
              struct([
                ['averageValue', c.currentAverageValue],
                ['averageUtilization', c.currentAverageUtilization],
              ]),
            ],
            ['container', c.container ?? ''],
          ])
        : undefined,
    ],
    [
      'external',
      m.external
        ? struct([
            ['metric', metric(e.metricName, e.metricSelector)],
            [
              'current',
              struct([
                ['value', e.currentValue],
                ['averageValue', e.currentAverageValue],
              ]),
            ],
          ])
        : undefined,
    ],
  ]);
}

/**
 * An autoscaling/v1 HPA (a request's body, whole or an apply configuration) as the autoscaling/v2 object it is
 * stored as. Without a CPU target or other metrics the stored object gets v2's default (CPU at 80 %).
 */
export function hpaV2FromV1(body: KubeObject): KubeObject {
  const out: Obj = { ...body, apiVersion: 'autoscaling/v2' };
  const metadata: Obj = isObj(body.metadata) ? { ...body.metadata } : {};
  const given: Obj = isObj(metadata.annotations) ? metadata.annotations : {};
  const others = annotationList(given, METRICS);
  const current = annotationList(given, CURRENT_METRICS);
  const conditions = annotationList(given, CONDITIONS);
  let behavior: unknown;
  if (given[BEHAVIOR] !== undefined) {
    try {
      behavior = JSON.parse(String(given[BEHAVIOR]));
    } catch (err) {
      throw badRequest(
        `HorizontalPodAutoscaler in version "v1" cannot be handled as a HorizontalPodAutoscaler: the ${BEHAVIOR} annotation is not JSON: ${(err as Error).message}`,
      );
    }
  }
  if (isObj(metadata.annotations)) {
    const kept: Obj = {};
    for (const [k, v] of Object.entries(given)) if (!ROUND_TRIP.includes(k)) kept[k] = v;
    if (Object.keys(kept).length) metadata.annotations = kept;
    else delete metadata.annotations;
  }
  if (isObj(body.metadata)) out.metadata = metadata;

  if (isObj(body.spec)) {
    const s: Obj = body.spec;
    const metrics = (others ?? []).map(metricSpecFromV1);
    if (s.targetCPUUtilizationPercentage != null) {
      metrics.push({
        type: 'Resource',
        resource: {
          name: 'cpu',
          target: { type: 'Utilization', averageUtilization: s.targetCPUUtilizationPercentage },
        },
      });
    }
    out.spec = struct([
      ['scaleTargetRef', s.scaleTargetRef],
      ['minReplicas', s.minReplicas],
      ['maxReplicas', s.maxReplicas],
      ['metrics', metrics.length ? metrics : undefined],
      ['behavior', isObj(behavior) ? behavior : undefined],
    ]);
  }
  if (isObj(body.status)) {
    const st: Obj = body.status;
    let currentMetrics = (current ?? []).map(metricStatusFromV1);
    if (!current && st.currentCPUUtilizationPercentage != null) {
      currentMetrics = [
        {
          type: 'Resource',
          resource: { name: 'cpu', current: { averageUtilization: st.currentCPUUtilizationPercentage } },
        },
      ];
    }
    out.status = struct([
      ['observedGeneration', st.observedGeneration],
      ['lastScaleTime', st.lastScaleTime],
      ['currentReplicas', st.currentReplicas],
      ['desiredReplicas', st.desiredReplicas],
      ['currentMetrics', currentMetrics.length ? currentMetrics : undefined],
      [
        'conditions',
        conditions?.length
          ? conditions.map((c) =>
              struct([
                ['type', c.type],
                ['status', c.status],
                ['lastTransitionTime', c.lastTransitionTime ?? undefined],
                ['reason', c.reason],
                ['message', c.message],
              ]),
            )
          : undefined,
      ],
    ]);
  }
  return out;
}
