/**
 * `ctrlmetrics generate helm` (kubebuilder's helm plugin): a Helm chart in `dist/chart/` made from the project's own
 * kustomize output (`kubectl kustomize config/default`), so the chart and `npm run deploy` install the same objects
 * and cannot drift apart. Each object becomes a template; the release's namespace takes the place of the project's
 * (`helm install -n <ns> --create-namespace`, so the Namespace object is left out); the manager's image, replica
 * count and resources come from values.yaml; the CRDs are installed, and kept when the release is uninstalled, as
 * `crd.enable` and `crd.keep` say; the metrics Service as `metrics.enable` says. Run it again after the project
 * changes. A file of the chart its user edited is left alone unless forced: the chart records what it wrote
 * (`.ctrlmetrics-chart.json`, a SHA-256 per file).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { ScaffoldError } from './errors.js';
import { readProjectFile } from './project-file.js';
import { parseImageRef } from './set-image.js';
import { scalarText } from 'ctrlmetrics/internal';

/** Where the chart goes, relative to the project. */
export const CHART_DIR = 'dist/chart';
const RECORD = '.ctrlmetrics-chart.json';

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

function kustomize(dir: string): Promise<string> {
  return new Promise((res, rej) =>
    execFile(
      'kubectl',
      ['kustomize', join(dir, 'config', 'default')],
      { timeout: 120_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT')
          rej(new ScaffoldError('generate helm reads the kustomize output: it needs kubectl (1.21 or later) on PATH'));
        else if (err)
          rej(
            new ScaffoldError(
              `kubectl kustomize config/default failed: ${(stderr || err.message).trim().split('\n')[0]}`,
            ),
          );
        else res(stdout);
      },
    ),
  );
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

/** The manager Deployment's template and the values it reads. */
function managerTemplate(o: Obj): { text: string; values: Obj } {
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
  let text = escapeActions(stringify(o, { indentSeq: false, lineWidth: 0 }));
  text = text
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

function crdTemplate(o: Obj): string {
  o.metadata = { ...o.metadata, annotations: { ...(o.metadata?.annotations ?? {}), [P.keep]: P.keep } };
  const text = escapeActions(stringify(o, { indentSeq: false, lineWidth: 0 })).replace(
    new RegExp(`^( *)${P.keep}: ${P.keep}$`, 'm'),
    (_m, indent: string) =>
      `${indent}{{- if .Values.crd.keep }}\n${indent}helm.sh/resource-policy: keep\n${indent}{{- end }}`,
  );
  return `{{- if .Values.crd.enable }}\n${text}{{- end }}\n`;
}

/** Writes (or refreshes) the chart of the project in `dir`. */
export async function generateHelmChart(dir: string, opts: { force?: boolean } = {}): Promise<HelmResult> {
  const root = resolve(dir);
  const project = readProjectFile(root);
  const namespace = `${project.projectName}-system`;
  const docs = parseAllDocuments(await kustomize(root))
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o && typeof o === 'object');

  const files = new Map<string, string>();
  let manager: Obj | undefined;
  for (const o of docs) {
    if (o.kind === 'Namespace') continue;
    const folder = folderOf(o);
    const file = `templates/${folder}/${scalarText(o.kind).toLowerCase()}-${scalarText(o.metadata?.name)}.yaml`;
    let text: string;
    if (o.kind === 'Deployment' && !manager) {
      const t = managerTemplate(o);
      manager = t.values;
      text = t.text;
    } else if (o.kind === 'CustomResourceDefinition') text = crdTemplate(o);
    else text = escapeActions(stringify(o, { indentSeq: false, lineWidth: 0 }));
    if (folder === 'metrics') text = `{{- if .Values.metrics.enable }}\n${text}{{- end }}\n`;
    // the project's namespace, wherever kustomize put it (metadata, subjects, DNS names, CA injection), is the release's
    files.set(file, text.replaceAll(namespace, '{{ .Release.Namespace }}'));
  }
  if (!manager) throw new ScaffoldError('config/default renders no manager Deployment: nothing to make a chart of');
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
  files.set(
    'values.yaml',
    `# Values of the ${project.projectName} chart (ctrlmetrics generate helm, from config/default).\n` +
      stringify(
        {
          manager,
          crd: { enable: true, keep: true },
          metrics: { enable: true },
        },
        { indentSeq: false },
      )
        .replace(
          /^crd:$/m,
          '# the CRDs: installed with the release, and kept (with every object of theirs) when it is uninstalled\ncrd:',
        )
        .replace(
          /^metrics:$/m,
          "# the metrics Service (the endpoint is the manager's --metrics-bind-address)\nmetrics:",
        ),
  );

  // what the user edited since the last run stays, unless forced
  const chart = join(root, CHART_DIR);
  const recordFile = join(chart, RECORD);
  const before = existsSync(recordFile) ? (JSON.parse(readFileSync(recordFile, 'utf8')) as Record<string, string>) : {};
  const edited = Object.entries(before)
    .filter(([f, hash]) => existsSync(join(chart, f)) && sha(readFileSync(join(chart, f), 'utf8')) !== hash)
    .map(([f]) => f);
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
