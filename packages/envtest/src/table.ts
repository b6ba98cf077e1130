/**
 * `meta.k8s.io/v1 Table` output (what `kubectl get` asks for): kube's printer columns for the built-in kinds most
 * used (the others print NAME and AGE), a CRD's additional printer columns.
 */
import { record, records, type JsonObject } from './json.js';
import type { KubeObject, ResourceType } from './types.js';

/** kube's `duration.HumanDuration` (as in the AGE column). */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(seconds / 3600);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** True when the Accept header asks for a Table. */
export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept.split(',')[0] ?? '');
}

/**
 * The value of a printer column's JSONPath: `.a.b`, `.a[0]` and `.a[?(@.type == "Ready")].status` (the first
 * matching element), the forms CRDs use in additionalPrinterColumns.
 */
export function jsonPathValue(obj: unknown, path: string): unknown {
  const tokens = path.replace(/^\./, '').match(/\[\?\(@\.[^)]*\)\]|\[\d+\]|[^.[\]]+/g) ?? [];
  let cur: unknown = obj;
  for (const tok of tokens) {
    if (cur === null || typeof cur !== 'object') return undefined;
    const index = /^\[(\d+)\]$/.exec(tok);
    const filter = /^\[\?\(@\.([\w.-]+)\s*==\s*(?:"([^"]*)"|'([^']*)'|([^)\s]+))\s*\)\]$/.exec(tok);
    if (index) cur = Array.isArray(cur) ? cur[Number(index[1])] : undefined;
    else if (filter) {
      if (!Array.isArray(cur)) return undefined;
      const want = filter[2] ?? filter[3] ?? filter[4];
      cur = cur.find((el) => el && typeof el === 'object' && String(jsonPathValue(el, filter[1])) === want);
    } else cur = (cur as Record<string, unknown>)[tok];
  }
  return cur;
}

function partialMetadata(o: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
}

/** One column of a built-in kind's table (kube's printers): header, type, priority (1 = `-o wide`), cell. */
interface Column {
  name: string;
  type?: string;
  priority?: number;
  cell: (o: KubeObject) => unknown;
}

const count = (v: unknown) => (v && typeof v === 'object' ? Object.keys(v).length : 0);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** The objects of a list field (other items left out: a printer reads fields of each). */
const items = records;
/** The value at a path of fields below an object (`undefined` where one is missing or not an object). */
const at = (v: unknown, ...keys: string[]): unknown => keys.reduce<unknown>((x, k) => record(x)?.[k], v);
const joinOr = (xs: string[], none: string) => (xs.length ? xs.join(',') : none);
function labelSelectorText(selector: unknown): string {
  const sel = record(selector);
  if (!sel) return '<none>';
  const parts = Object.entries(record(sel.matchLabels) ?? {}).map(([k, v]) => `${k}=${String(v)}`);
  for (const e of items(sel.matchExpressions))
    parts.push(`${String(e.key)} ${String(e.operator).toLowerCase()} (${list(e.values).join(',')})`);
  return parts.length ? parts.join(',') : '<none>';
}
function subjectsOf(o: KubeObject, kind: string): string {
  return items(o.subjects)
    .filter((s) => s?.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${String(s.namespace ?? '')}/${String(s.name)}` : String(s.name)))
    .join(', ');
}
function sinceText(ts: unknown): string {
  const t = Date.parse(String(ts ?? ''));
  return Number.isNaN(t) ? '<unknown>' : humanDuration(Date.now() - t);
}
/** kubectl's ENDPOINTS cell: the first three addresses, then how many more. */
function endpointsText(addresses: string[]): string {
  if (addresses.length === 0) return '<unset>';
  const shown = addresses.slice(0, 3).join(',');
  return addresses.length > 3 ? `${shown} + ${addresses.length - 3} more...` : shown;
}
const bindingColumns: Column[] = [
  { name: 'Role', cell: (o) => `${String(at(o, 'roleRef', 'kind') ?? '')}/${String(at(o, 'roleRef', 'name') ?? '')}` },
  { name: 'Users', priority: 1, cell: (o) => subjectsOf(o, 'User') },
  { name: 'Groups', priority: 1, cell: (o) => subjectsOf(o, 'Group') },
  { name: 'ServiceAccounts', priority: 1, cell: (o) => subjectsOf(o, 'ServiceAccount') },
];
const createdAt: Column = { name: 'Created At', type: 'date', cell: (o) => o.metadata?.creationTimestamp ?? null };

/** kube's `labels.FormatLabels`: `k=v` pairs sorted by key, `<none>` when empty. */
function labelsText(m: unknown): string {
  const entries =
    m && typeof m === 'object' ? Object.entries(m as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : 1)) : [];
  return joinOr(
    entries.map(([k, v]) => `${k}=${v}`),
    '<none>',
  );
}
/** A pod template's `-o wide` columns, as the workload printers add them. */
const templateColumns = (spec: (o: KubeObject) => unknown, selector = true): Column[] => [
  {
    name: 'Containers',
    priority: 1,
    cell: (o) =>
      items(at(spec(o), 'template', 'spec', 'containers'))
        .map((c) => String(c.name))
        .join(','),
  },
  {
    name: 'Images',
    priority: 1,
    cell: (o) =>
      items(at(spec(o), 'template', 'spec', 'containers'))
        .map((c) => String(c.image))
        .join(','),
  },
  ...(selector
    ? [{ name: 'Selector', priority: 1, cell: (o: KubeObject) => labelSelectorText(at(spec(o), 'selector')) }]
    : []),
];
const int = (v: unknown) => Number(v ?? 0);
/** kube's `printBoolPtr`. */
const boolText = (v: unknown) => (v === undefined || v === null ? '<unset>' : v ? 'True' : 'False');
/** A Job's COMPLETIONS cell. */
function completionsText(o: KubeObject): string {
  const succeeded = int(at(o, 'status', 'succeeded'));
  if (at(o, 'spec', 'completions') !== undefined && at(o, 'spec', 'completions') !== null)
    return `${succeeded}/${int(at(o, 'spec', 'completions'))}`;
  const parallelism = int(at(o, 'spec', 'parallelism'));
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}
/** A Job's DURATION cell: from its start to its completion, or until now while it runs; empty before it starts. */
function durationText(o: KubeObject): string {
  const start = Date.parse(String(at(o, 'status', 'startTime') ?? ''));
  if (Number.isNaN(start)) return '';
  const end = Date.parse(String(at(o, 'status', 'completionTime') ?? ''));
  return humanDuration((Number.isNaN(end) ? Date.now() : end) - start);
}
/** kube's access modes shorthand (`RWO,ROX`). */
function accessModesText(modes: unknown): string {
  const short: Record<string, string> = {
    ReadWriteOnce: 'RWO',
    ReadOnlyMany: 'ROX',
    ReadWriteMany: 'RWX',
    ReadWriteOncePod: 'RWOP',
  };
  return list(modes)
    .map((m) => short[String(m)] ?? String(m))
    .join(',');
}
/** An Ingress's HOSTS cell: the rules' hosts (`*` for a rule without one), the first three then how many more. */
function hostsText(o: KubeObject): string {
  const hosts = items(at(o, 'spec', 'rules')).map((r) => String(r.host || '*'));
  if (!hosts.length) return '*';
  return hosts.length > 3 ? `${hosts.slice(0, 3).join(',')} + ${hosts.length - 3} more...` : hosts.join(',');
}
/** The ingress points of a load balancer status, as its printers list them. */
function loadBalancerText(status: unknown): string {
  return items(at(status, 'loadBalancer', 'ingress'))
    .map((i) => String(i.ip || i.hostname || ''))
    .filter(Boolean)
    .join(',');
}

/** Columns between NAME and AGE per built-in kind; `noAge` kinds print CREATED AT instead of AGE. */
const BUILTIN_COLUMNS: Record<string, { columns: Column[]; noAge?: boolean; noName?: boolean }> = {
  namespaces: { columns: [{ name: 'Status', cell: (o) => at(o, 'status', 'phase') ?? '' }] },
  configmaps: { columns: [{ name: 'Data', type: 'integer', cell: (o) => count(o.data) + count(o.binaryData) }] },
  secrets: {
    columns: [
      { name: 'Type', cell: (o) => o.type ?? '' },
      { name: 'Data', type: 'integer', cell: (o) => count(o.data) },
    ],
  },
  serviceaccounts: { columns: [{ name: 'Secrets', type: 'integer', cell: (o) => list(o.secrets).length }] },
  services: {
    columns: [
      { name: 'Type', cell: (o) => at(o, 'spec', 'type') ?? 'ClusterIP' },
      { name: 'Cluster-IP', cell: (o) => at(o, 'spec', 'clusterIP') || '<none>' },
      {
        name: 'External-IP',
        cell: (o) =>
          joinOr(
            list(at(o, 'spec', 'externalIPs')).map(String),
            at(o, 'spec', 'type') === 'ExternalName' ? String(at(o, 'spec', 'externalName') ?? '<none>') : '<none>',
          ),
      },
      {
        name: 'Port(s)',
        cell: (o) =>
          joinOr(
            items(at(o, 'spec', 'ports')).map(
              (p) => `${String(p.port)}${p.nodePort ? `:${String(p.nodePort)}` : ''}/${String(p.protocol ?? 'TCP')}`,
            ),
            '<none>',
          ),
      },
      {
        name: 'Selector',
        priority: 1,
        cell: (o) =>
          joinOr(
            Object.entries(record(at(o, 'spec', 'selector')) ?? {}).map(([k, v]) => `${k}=${String(v)}`),
            '<none>',
          ),
      },
    ],
  },
  'deployments.apps': {
    columns: [
      {
        name: 'Ready',
        cell: (o) => `${Number(at(o, 'status', 'readyReplicas') ?? 0)}/${Number(at(o, 'spec', 'replicas') ?? 0)}`,
      },
      { name: 'Up-to-date', type: 'integer', cell: (o) => Number(at(o, 'status', 'updatedReplicas') ?? 0) },
      { name: 'Available', type: 'integer', cell: (o) => Number(at(o, 'status', 'availableReplicas') ?? 0) },
      {
        name: 'Containers',
        priority: 1,
        cell: (o) =>
          items(at(o, 'spec', 'template', 'spec', 'containers'))
            .map((c) => String(c.name))
            .join(','),
      },
      {
        name: 'Images',
        priority: 1,
        cell: (o) =>
          items(at(o, 'spec', 'template', 'spec', 'containers'))
            .map((c) => String(c.image))
            .join(','),
      },
      { name: 'Selector', priority: 1, cell: (o) => labelSelectorText(at(o, 'spec', 'selector')) },
    ],
  },
  'statefulsets.apps': {
    columns: [
      { name: 'Ready', cell: (o) => `${int(at(o, 'status', 'readyReplicas'))}/${int(at(o, 'spec', 'replicas'))}` },
      ...templateColumns((o) => o.spec, false),
    ],
  },
  'replicasets.apps': {
    columns: [
      { name: 'Desired', type: 'integer', cell: (o) => int(at(o, 'spec', 'replicas')) },
      { name: 'Current', type: 'integer', cell: (o) => int(at(o, 'status', 'replicas')) },
      { name: 'Ready', type: 'integer', cell: (o) => int(at(o, 'status', 'readyReplicas')) },
      ...templateColumns((o) => o.spec),
    ],
  },
  'daemonsets.apps': {
    columns: [
      { name: 'Desired', type: 'integer', cell: (o) => int(at(o, 'status', 'desiredNumberScheduled')) },
      { name: 'Current', type: 'integer', cell: (o) => int(at(o, 'status', 'currentNumberScheduled')) },
      { name: 'Ready', type: 'integer', cell: (o) => int(at(o, 'status', 'numberReady')) },
      { name: 'Up-to-date', type: 'integer', cell: (o) => int(at(o, 'status', 'updatedNumberScheduled')) },
      { name: 'Available', type: 'integer', cell: (o) => int(at(o, 'status', 'numberAvailable')) },
      { name: 'Node Selector', cell: (o) => labelsText(at(o, 'spec', 'template', 'spec', 'nodeSelector')) },
      ...templateColumns((o) => o.spec),
    ],
  },
  'jobs.batch': {
    columns: [
      { name: 'Completions', cell: completionsText },
      { name: 'Duration', cell: durationText },
      ...templateColumns((o) => o.spec),
    ],
  },
  'cronjobs.batch': {
    columns: [
      { name: 'Schedule', cell: (o) => at(o, 'spec', 'schedule') ?? '' },
      { name: 'Suspend', cell: (o) => boolText(at(o, 'spec', 'suspend')) },
      { name: 'Active', type: 'integer', cell: (o) => list(at(o, 'status', 'active')).length },
      {
        name: 'Last Schedule',
        cell: (o) => (at(o, 'status', 'lastScheduleTime') ? sinceText(at(o, 'status', 'lastScheduleTime')) : '<none>'),
      },
      ...templateColumns((o) => at(o, 'spec', 'jobTemplate', 'spec')),
    ],
  },
  persistentvolumeclaims: {
    columns: [
      { name: 'Status', cell: (o) => at(o, 'status', 'phase') ?? '' },
      { name: 'Volume', cell: (o) => at(o, 'spec', 'volumeName') ?? '' },
      {
        name: 'Capacity',
        cell: (o) => (at(o, 'spec', 'volumeName') ? String(at(o, 'status', 'capacity', 'storage') ?? '') : ''),
      },
      {
        name: 'Access Modes',
        cell: (o) => (at(o, 'spec', 'volumeName') ? accessModesText(at(o, 'status', 'accessModes')) : ''),
      },
      {
        name: 'StorageClass',
        cell: (o) =>
          at(o, 'spec', 'storageClassName') ??
          o.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ??
          '',
      },
      { name: 'VolumeMode', priority: 1, cell: (o) => at(o, 'spec', 'volumeMode') ?? '<unset>' },
    ],
  },
  persistentvolumes: {
    columns: [
      { name: 'Capacity', cell: (o) => String(at(o, 'spec', 'capacity', 'storage') ?? '') },
      { name: 'Access Modes', cell: (o) => accessModesText(at(o, 'spec', 'accessModes')) },
      { name: 'Reclaim Policy', cell: (o) => at(o, 'spec', 'persistentVolumeReclaimPolicy') ?? '' },
      { name: 'Status', cell: (o) => at(o, 'status', 'phase') ?? '' },
      {
        name: 'Claim',
        cell: (o) =>
          at(o, 'spec', 'claimRef')
            ? `${String(at(o, 'spec', 'claimRef', 'namespace') ?? '')}/${String(at(o, 'spec', 'claimRef', 'name') ?? '')}`
            : '',
      },
      { name: 'StorageClass', cell: (o) => at(o, 'spec', 'storageClassName') ?? '' },
      { name: 'Reason', cell: (o) => at(o, 'status', 'reason') ?? '' },
      { name: 'VolumeMode', priority: 1, cell: (o) => at(o, 'spec', 'volumeMode') ?? '<unset>' },
    ],
  },
  endpoints: {
    columns: [
      {
        name: 'Endpoints',
        cell: (o) => {
          const pairs = items(o.subsets).flatMap((s) => {
            const ports = items(s.ports).map((p) => String(p.port));
            return items(s.addresses).flatMap((a) =>
              ports.length ? ports.map((p) => `${String(a.ip)}:${p}`) : [String(a.ip)],
            );
          });
          return pairs.length ? endpointsText(pairs) : '<none>';
        },
      },
    ],
  },
  'ingresses.networking.k8s.io': {
    columns: [
      { name: 'Class', cell: (o) => at(o, 'spec', 'ingressClassName') ?? '<none>' },
      { name: 'Hosts', cell: hostsText },
      { name: 'Address', cell: (o) => loadBalancerText(o.status) },
      { name: 'Ports', cell: (o) => (list(at(o, 'spec', 'tls')).length ? '80, 443' : '80') },
    ],
  },
  'ingressclasses.networking.k8s.io': {
    columns: [
      { name: 'Controller', cell: (o) => at(o, 'spec', 'controller') ?? '' },
      {
        name: 'Parameters',
        cell: (o) =>
          at(o, 'spec', 'parameters')
            ? `${String(at(o, 'spec', 'parameters', 'kind') ?? '')}/${String(at(o, 'spec', 'parameters', 'name') ?? '')}`
            : '<none>',
      },
    ],
  },
  'poddisruptionbudgets.policy': {
    columns: [
      {
        name: 'Min Available',
        cell: (o) => (at(o, 'spec', 'minAvailable') === undefined ? 'N/A' : String(at(o, 'spec', 'minAvailable'))),
      },
      {
        name: 'Max Unavailable',
        cell: (o) => (at(o, 'spec', 'maxUnavailable') === undefined ? 'N/A' : String(at(o, 'spec', 'maxUnavailable'))),
      },
      { name: 'Allowed Disruptions', type: 'integer', cell: (o) => int(at(o, 'status', 'disruptionsAllowed')) },
    ],
  },
  'priorityclasses.scheduling.k8s.io': {
    columns: [
      { name: 'Value', type: 'integer', cell: (o) => int(o.value) },
      { name: 'Global-Default', type: 'boolean', cell: (o) => o.globalDefault === true },
    ],
  },
  'networkpolicies.networking.k8s.io': {
    columns: [{ name: 'Pod-Selector', cell: (o) => labelSelectorText(at(o, 'spec', 'podSelector')) }],
  },
  'endpointslices.discovery.k8s.io': {
    columns: [
      { name: 'AddressType', cell: (o) => o.addressType ?? '' },
      {
        name: 'Ports',
        cell: (o) =>
          joinOr(
            items(o.ports).map((p) => String(p.port ?? '')),
            '<unset>',
          ),
      },
      {
        name: 'Endpoints',
        cell: (o) => endpointsText(items(o.endpoints).flatMap((e) => list(e.addresses).map(String))),
      },
    ],
  },
  'leases.coordination.k8s.io': { columns: [{ name: 'Holder', cell: (o) => at(o, 'spec', 'holderIdentity') ?? '' }] },
  'mutatingwebhookconfigurations.admissionregistration.k8s.io': {
    columns: [{ name: 'Webhooks', type: 'integer', cell: (o) => list(o.webhooks).length }],
  },
  'validatingwebhookconfigurations.admissionregistration.k8s.io': {
    columns: [{ name: 'Webhooks', type: 'integer', cell: (o) => list(o.webhooks).length }],
  },
  events: {
    noAge: true,
    noName: true,
    columns: [
      { name: 'Last Seen', cell: (o) => sinceText(o.lastTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp) },
      { name: 'Type', cell: (o) => o.type ?? '' },
      { name: 'Reason', cell: (o) => o.reason ?? '' },
      {
        name: 'Object',
        cell: (o) =>
          `${String(at(o, 'involvedObject', 'kind') ?? '').toLowerCase()}/${String(at(o, 'involvedObject', 'name') ?? '')}`,
      },
      { name: 'Message', cell: (o) => String(o.message ?? '').trim() },
      { name: 'Name', priority: 1, cell: (o) => o.metadata?.name },
    ],
  },
  'clusterroles.rbac.authorization.k8s.io': { columns: [createdAt], noAge: true },
  'roles.rbac.authorization.k8s.io': { columns: [createdAt], noAge: true },
  'customresourcedefinitions.apiextensions.k8s.io': { columns: [createdAt], noAge: true },
  'clusterrolebindings.rbac.authorization.k8s.io': { columns: bindingColumns },
  'rolebindings.rbac.authorization.k8s.io': { columns: bindingColumns },
};

/** Converts objects to a Table; `includeObject` is the query parameter (`None`, `Metadata` (default), `Object`). */
export function toTable(
  t: ResourceType,
  objects: KubeObject[],
  opts: { includeObject?: string | null; resourceVersion?: string; now?: number },
): JsonObject {
  const now = opts.now ?? Date.now();
  const builtin = t.crd ? undefined : BUILTIN_COLUMNS[t.group ? `${t.resource}.${t.group}` : t.resource];
  if (builtin) return builtinTable(builtin, objects, opts, now);
  const extra = (t.printerColumns ?? []).filter((c) => c.jsonPath !== '.metadata.creationTimestamp');
  const columnDefinitions = [
    {
      name: 'Name',
      type: 'string',
      format: 'name',
      description: 'Name must be unique within a namespace.',
      priority: 0,
    },
    ...extra.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description ?? '',
      priority: c.priority ?? 0,
    })),
    {
      name: 'Age',
      type: 'string',
      format: '',
      description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
      priority: 0,
    },
  ];
  const rows = objects.map((o) => {
    const created = Date.parse(String(o.metadata?.creationTimestamp ?? ''));
    const cells: unknown[] = [
      o.metadata?.name,
      ...extra.map((c) => {
        const v = jsonPathValue(o, c.jsonPath);
        if (c.type === 'date' && typeof v === 'string') return humanDuration(now - Date.parse(v));
        return v ?? null;
      }),
      Number.isNaN(created) ? '<unknown>' : humanDuration(now - created),
    ];
    const row: JsonObject = { cells };
    if (opts.includeObject !== 'None') row.object = opts.includeObject === 'Object' ? o : partialMetadata(o);
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: opts.resourceVersion ?? '' },
    columnDefinitions,
    rows,
  };
}

function rowObject(o: KubeObject, includeObject: string | null | undefined): KubeObject | undefined {
  if (includeObject === 'None') return undefined;
  return includeObject === 'Object' ? o : partialMetadata(o);
}

function builtinTable(
  spec: { columns: Column[]; noAge?: boolean; noName?: boolean },
  objects: KubeObject[],
  opts: { includeObject?: string | null; resourceVersion?: string },
  now: number,
): JsonObject {
  const age: Column = {
    name: 'Age',
    cell: (o) => {
      const created = Date.parse(String(o.metadata?.creationTimestamp ?? ''));
      return Number.isNaN(created) ? '<unknown>' : humanDuration(now - created);
    },
  };
  // kube's order: NAME, the normal columns, AGE, then the `-o wide` ones
  const columns = [
    ...(spec.noName ? [] : [{ name: 'Name', cell: (o: KubeObject) => o.metadata?.name } as Column]),
    ...spec.columns.filter((c) => !c.priority),
    ...(spec.noAge ? [] : [age]),
    ...spec.columns.filter((c) => c.priority),
  ];
  const columnDefinitions = columns.map((c) => ({
    name: c.name,
    type: c.type ?? 'string',
    format: c.name === 'Name' && !c.priority ? 'name' : '',
    description: '',
    priority: c.priority ?? 0,
  }));
  const rows = objects.map((o) => {
    const row: JsonObject = { cells: columns.map((c) => c.cell(o) ?? null) };
    const obj = rowObject(o, opts.includeObject);
    if (obj) row.object = obj;
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: opts.resourceVersion ?? '' },
    columnDefinitions,
    rows,
  };
}
