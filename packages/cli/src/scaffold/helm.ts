/**
 * `ctrlmetrics generate helm` (kubebuilder's helm plugin): a Helm chart in `dist/chart/` made from the project's own
 * kustomize output (`kubectl kustomize config/default`), so the chart and `npm run deploy` install the same objects
 * and cannot drift apart. Each object becomes a template; the release's namespace takes the place of the project's
 * (`helm install -n <ns> --create-namespace`, so the Namespace object is left out); the manager's image, replica
 * count and resources come from values.yaml; the CRDs are installed, and kept when the release is uninstalled, as
 * `crd.enable` and `crd.keep` say; the metrics Service as `metrics.enable` says. Each option the project has on
 * (leader election, the verified metrics certificate, webhooks, cert-manager, Prometheus, network policies,
 * Grafana) becomes a switch of values.yaml whose off renders what kustomize renders with the option off
 * (helm-switches.ts, helm-template.ts); one the project lacks cannot be turned on, and a switch on without what it
 * needs stops the install with why (templates/checks.yaml). Run it again after the project changes. A file of the chart its user edited is left alone unless forced: the chart records what it wrote
 * (`.ctrlmetrics-chart.json`, a SHA-256 per file).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Document, isMap, isScalar, parseAllDocuments } from 'yaml';
import { ScaffoldError } from './errors.js';
import { readProjectFile } from './project-file.js';
import { parseImageRef } from './set-image.js';
import { scalarText } from 'ctrlmetrics/internal';
import { CHART_SWITCHES, kustomize, renderWithout, type ChartSwitch } from './helm-switches.js';
import { all, objectTemplate, toYaml } from './helm-template.js';

/** Where the chart goes, relative to the project. */
export const CHART_DIR = 'dist/chart';
/** The key of PROJECT's `plugins` that says the project has a chart (kept up to date by `edit`). */
export const HELM_PLUGIN = 'helm.ctrlmetrics.io/v1';
const RECORD = '.ctrlmetrics-chart.json';

/** What the chart's record says ctrlmetrics last wrote: file (relative to the chart) → SHA-256. */
function chartRecord(chart: string): Record<string, string> | undefined {
  const file = join(chart, RECORD);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : undefined;
}

/** The files of the project's chart its user edited since ctrlmetrics wrote them (relative to the chart). */
export function editedChartFiles(dir: string): string[] {
  const chart = join(resolve(dir), CHART_DIR);
  return Object.entries(chartRecord(chart) ?? {})
    .filter(([f, hash]) => existsSync(join(chart, f)) && sha(readFileSync(join(chart, f), 'utf8')) !== hash)
    .map(([f]) => f)
    .sort();
}

/** An object of the kustomize output, as far as the chart reads it. */
interface Obj {
  kind?: unknown;
  metadata?: { name?: unknown; annotations?: Record<string, string> } & Record<string, unknown>;
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

interface Container {
  name?: unknown;
  image?: unknown;
  resources?: unknown;
}

/** The containers of a Deployment's pod template. */
function containersOf(o: Obj): Container[] {
  const template = o.spec?.template as { spec?: { containers?: Container[] } } | undefined;
  return template?.spec?.containers ?? [];
}

export interface HelmResult {
  /** the chart's directory */
  dir: string;
  /** files written (relative to the chart) */
  written: string[];
  /** files of an earlier run removed: their objects are gone from the kustomize output */
  removed: string[];
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** The folder of the chart's templates an object goes to, by what it is. */
function folderOf(o: Obj): string {
  const kind = scalarText(o.kind);
  const name = scalarText(o.metadata?.name ?? '');
  if (kind === 'CustomResourceDefinition') return 'crd';
  if (['ServiceAccount', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].includes(kind)) return 'rbac';
  if (kind === 'Deployment') return 'manager';
  if (kind === 'Service' && name.endsWith('metrics-service')) return 'metrics';
  if (
    ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'].includes(kind) ||
    name.endsWith('webhook-service')
  )
    return 'webhook';
  if (['Issuer', 'Certificate'].includes(kind)) return 'certmanager';
  if (kind === 'ServiceMonitor') return 'prometheus';
  if (kind === 'NetworkPolicy') return 'network-policy';
  return kind.toLowerCase();
}

/** Text that Go's templates print as it is: a `{{` of the objects' own (a dashboard's legend) becomes an action printing it. */
const escapeActions = (text: string) => text.replaceAll('{{', '{{ "{{" }}');

/** Placeholders set in an object, replaced by template actions once it is YAML. */
const P = {
  image: '__CTRLMETRICS_IMAGE__',
  replicas: '__CTRLMETRICS_REPLICAS__',
  resources: '__CTRLMETRICS_RESOURCES__',
  keep: '__CTRLMETRICS_KEEP__',
};

/** The YAML of an object of the chart: its own `{{` printed as is, then the switches' guards put in. */
const yamlOf = (o: Obj, finish: (yaml: string) => string) => finish(escapeActions(toYaml(o)));

/** The manager Deployment's template and the values it reads. */
function managerTemplate(o: Obj, finish: (yaml: string) => string): { text: string; values: Obj } {
  const containers = containersOf(o);
  const manager = containers.find((c) => c.name === 'manager') ?? containers[0];
  if (!manager) throw new ScaffoldError(`Deployment ${scalarText(o.metadata?.name)} has no container to template`);
  const image = parseImageRef(scalarText(manager.image)) ?? { newName: scalarText(manager.image) };
  const values: Record<string, unknown> = {
    image: {
      repository: image.newName,
      tag: image.newTag ?? (image.digest ? '' : 'latest'),
      digest: image.digest ?? '',
    },
    replicas: o.spec?.replicas ?? 1,
    resources: manager.resources ?? {},
  };
  manager.image = P.image;
  o.spec = { ...o.spec, replicas: P.replicas };
  manager.resources = P.resources;
  const text = yamlOf(o, finish)
    .replace(
      new RegExp(`image: ${P.image}`),
      'image: "{{ .Values.manager.image.repository }}{{ with .Values.manager.image.tag }}:{{ . }}{{ end }}{{ with .Values.manager.image.digest }}@{{ . }}{{ end }}"',
    )
    .replace(`replicas: ${P.replicas}`, 'replicas: {{ .Values.manager.replicas }}')
    .replace(
      new RegExp(`^( *)resources: ${P.resources}$`, 'm'),
      (_m, indent: string) =>
        `${indent}resources:\n${indent}  {{- toYaml .Values.manager.resources | nindent ${indent.length + 2} }}`,
    );
  return { text, values };
}

function crdTemplate(o: Obj, finish: (yaml: string) => string): string {
  o.metadata = { ...o.metadata, annotations: { ...(o.metadata?.annotations ?? {}), [P.keep]: P.keep } };
  return yamlOf(o, finish).replace(
    new RegExp(`^( *)${P.keep}: ${P.keep}$`, 'm'),
    (_m, indent: string) =>
      `${indent}{{- if .Values.crd.keep }}\n${indent}helm.sh/resource-policy: keep\n${indent}{{- end }}`,
  );
}

const key = (o: Obj) =>
  `${scalarText(o.kind)}/${scalarText(o.metadata?.namespace ?? '')}/${scalarText(o.metadata?.name ?? '')}`;

const objectsOf = (yaml: string): Obj[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o && typeof o === 'object' && o.kind !== 'Namespace');

const valueOf = (sw: ChartSwitch) => `.Values.${sw.value}`;

/** A template that renders nothing, or stops the install with why: a switch on without what it needs, or one the chart has no objects for. */
function checksTemplate(present: ReadonlySet<ChartSwitch>): string {
  const lines = ['{{- /* the values this chart cannot render: the install stops with why */}}'];
  for (const sw of CHART_SWITCHES) {
    if (!present.has(sw))
      lines.push(
        `{{- if .Values.${sw.value} }}`,
        `{{- fail ${JSON.stringify(`${sw.value}: the project this chart was made from has none of it (${sw.hint}, then ctrlmetrics generate helm)`)} }}`,
        '{{- end }}',
      );
    for (const need of sw.needs)
      lines.push(
        `{{- if and .Values.${sw.value} (not .Values.${need}) }}`,
        `{{- fail ${JSON.stringify(`${sw.value} needs ${need}: turn both on, or ${sw.value} off`)} }}`,
        '{{- end }}',
      );
  }
  return lines.join('\n') + '\n';
}

/** values.yaml: the manager's image, replicas and resources, then the switches, each with what it does. */
function valuesFile(projectName: string, manager: Obj, present: ReadonlySet<ChartSwitch>): string {
  const values: Record<string, Record<string, unknown>> = {
    manager,
    crd: { enable: true, keep: true },
    metrics: { enable: true },
  };
  for (const sw of CHART_SWITCHES) {
    const [section, name] = sw.value.split('.');
    (values[section] ??= {})[name] = present.has(sw);
  }
  const doc = new Document(values);
  const comment = (path: string[], text: string) => {
    const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
    if (!isMap(parent)) return;
    const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === path[path.length - 1]);
    if (pair && isScalar(pair.key)) pair.key.commentBefore = ` ${text}`;
  };
  comment(
    ['crd'],
    'the CRDs: installed with the release, and kept (with every object of theirs) when it is uninstalled',
  );
  comment(['metrics'], "the metrics Service (the endpoint is the manager's --metrics-bind-address)");
  for (const sw of CHART_SWITCHES)
    comment(
      // a section whose one key is `enable` carries the comment itself
      sw.value.endsWith('.enable') ? [sw.value.split('.')[0]] : sw.value.split('.'),
      present.has(sw) ? sw.about : `${sw.about}: not in this chart (${sw.hint}, then ctrlmetrics generate helm)`,
    );
  return `# Values of the ${projectName} chart (ctrlmetrics generate helm, from config/default).\n${doc.toString({ indentSeq: false })}`;
}

/** Writes (or refreshes) the chart of the project in `dir`. */
export async function generateHelmChart(dir: string, opts: { force?: boolean } = {}): Promise<HelmResult> {
  const root = resolve(dir);
  const project = readProjectFile(root);
  const namespace = `${project.projectName}-system`;
  const full = objectsOf(await kustomize(root));
  // what each switch the project has brings: the same project rendered without it
  const present = new Set(CHART_SWITCHES.filter((sw) => sw.on(root)));
  const without = new Map<ChartSwitch, Map<string, Obj>>();
  await Promise.all(
    [...present].map(async (sw) =>
      without.set(sw, new Map(objectsOf(await renderWithout(root, sw)).map((o) => [key(o), o]))),
    ),
  );
  const keys = new Set(full.map(key));
  for (const [sw, objects] of without)
    for (const k of objects.keys())
      if (!keys.has(k))
        throw new ScaffoldError(`${k} is rendered only with ${sw.value} off: the chart cannot template it`);

  const files = new Map<string, string>();
  let manager: Obj | undefined;
  for (const o of full) {
    const folder = folderOf(o);
    const file = `templates/${folder}/${scalarText(o.kind).toLowerCase()}-${scalarText(o.metadata?.name)}.yaml`;
    const t = objectTemplate(
      o,
      new Map([...without].map(([sw, objects]) => [valueOf(sw), objects.get(key(o))])),
      key(o),
    );
    const marked = t.value as Obj;
    let text: string;
    if (o.kind === 'Deployment' && !manager) {
      const m = managerTemplate(marked, t.finish);
      manager = m.values;
      text = m.text;
    } else if (o.kind === 'CustomResourceDefinition') {
      text = crdTemplate(marked, t.finish);
      t.guard.add('.Values.crd.enable');
    } else text = yamlOf(marked, t.finish);
    if (folder === 'metrics') t.guard.add('.Values.metrics.enable');
    if (t.guard.size) text = `{{- if ${all(t.guard)} }}\n${text}{{- end }}\n`;
    // the project's namespace, wherever kustomize put it (metadata, subjects, DNS names, CA injection), is the release's
    files.set(file, text.replaceAll(namespace, '{{ .Release.Namespace }}'));
  }
  if (!manager) throw new ScaffoldError('config/default renders no manager Deployment: nothing to make a chart of');
  files.set('templates/checks.yaml', checksTemplate(present));
  const version = (() => {
    try {
      return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? '0.1.0';
    } catch {
      return '0.1.0';
    }
  })();
  files.set(
    'Chart.yaml',
    `apiVersion: v2\nname: ${project.projectName}\ndescription: The ${project.projectName} operator (made by ctrlmetrics generate helm from config/default)\ntype: application\nversion: ${version}\nappVersion: ${JSON.stringify(version)}\n`,
  );
  files.set('values.yaml', valuesFile(project.projectName, manager, present));

  // what the user edited since the last run stays, unless forced
  const chart = join(root, CHART_DIR);
  const recordFile = join(chart, RECORD);
  const before = chartRecord(chart) ?? {};
  const edited = editedChartFiles(root);
  const unrecorded = existsSync(recordFile) ? [] : [...files.keys()].filter((f) => existsSync(join(chart, f)));
  const mine = [...edited, ...unrecorded].sort();
  if (mine.length && !opts.force)
    throw new ScaffoldError(
      `${CHART_DIR} has files edited since ctrlmetrics wrote them (${mine.slice(0, 3).join(', ')}${mine.length > 3 ? ', …' : ''}); pass --force to overwrite them`,
    );
  const written: string[] = [];
  const record: Record<string, string> = {};
  for (const [f, text] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    record[f] = sha(text);
    const at = join(chart, f);
    if (existsSync(at) && readFileSync(at, 'utf8') === text) continue;
    mkdirSync(dirname(at), { recursive: true });
    writeFileSync(at, text);
    written.push(f);
  }
  const removed: string[] = [];
  for (const f of Object.keys(before)) {
    if (files.has(f) || !existsSync(join(chart, f))) continue;
    if (edited.includes(f) && !opts.force) continue;
    rmSync(join(chart, f));
    removed.push(f);
  }
  writeFileSync(recordFile, JSON.stringify(record, null, 2) + '\n');
  return { dir: chart, written, removed };
}
