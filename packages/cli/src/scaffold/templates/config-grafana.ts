/**
 * `config/grafana/`: Grafana dashboards (JSON) for the controller-runtime metrics, like kubebuilder's grafana plugin,
 * shipped as a ConfigMap labelled for the Grafana dashboard sidecar (`grafana_dashboard: "1"`).
 */
import type { ProjectParams } from './params.js';

interface Panel {
  title: string;
  unit: string;
  targets: Array<{ expr: string; legend: string }>;
}

function dashboard(p: ProjectParams, uidSuffix: string, title: string, panels: Panel[]): string {
  const sel = 'namespace="$namespace", job=~"$job"';
  const body = {
    title,
    uid: `${p.projectName}-${uidSuffix}`.slice(0, 40),
    tags: ['ctrlmetrics', 'controller-runtime', p.projectName],
    timezone: 'browser',
    schemaVersion: 39,
    refresh: '30s',
    time: { from: 'now-1h', to: 'now' },
    templating: {
      list: [
        { name: 'datasource', type: 'datasource', query: 'prometheus', label: 'Data source' },
        {
          name: 'namespace',
          type: 'custom',
          query: `${p.projectName}-system`,
          current: { text: `${p.projectName}-system`, value: `${p.projectName}-system` },
          label: 'Namespace',
        },
        {
          name: 'job',
          type: 'query',
          datasource: { type: 'prometheus', uid: '$datasource' },
          query: 'label_values(controller_runtime_reconcile_total{namespace="$namespace"}, job)',
          includeAll: true,
          multi: true,
          label: 'Job',
        },
      ],
    },
    panels: panels.map((panel, i) => ({
      id: i + 1,
      type: 'timeseries',
      title: panel.title,
      datasource: { type: 'prometheus', uid: '$datasource' },
      gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
      fieldConfig: { defaults: { unit: panel.unit }, overrides: [] },
      targets: panel.targets.map((t, j) => ({
        refId: String.fromCharCode(65 + j),
        expr: t.expr.replaceAll('SEL', sel),
        legendFormat: t.legend,
      })),
    })),
  };
  return JSON.stringify(body, null, 2) + '\n';
}

const quantiles = (metric: string, by: string): Array<{ expr: string; legend: string }> =>
  [0.5, 0.9, 0.99].map((q) => ({
    expr: `histogram_quantile(${q}, sum(rate(${metric}_bucket{SEL}[5m])) by (le, ${by}))`,
    legend: `p${q * 100} {{${by}}}`,
  }));

export function configGrafana(p: ProjectParams): Record<string, string> {
  const runtime = dashboard(p, 'controller-runtime', `${p.projectName}: controller-runtime`, [
    {
      title: 'Reconcile rate by result',
      unit: 'ops',
      targets: [
        {
          expr: 'sum(rate(controller_runtime_reconcile_total{SEL}[5m])) by (controller, result)',
          legend: '{{controller}} {{result}}',
        },
      ],
    },
    {
      title: 'Reconcile errors',
      unit: 'ops',
      targets: [
        {
          expr: 'sum(rate(controller_runtime_reconcile_errors_total{SEL}[5m])) by (controller)',
          legend: '{{controller}} errors',
        },
        {
          expr: 'sum(rate(controller_runtime_terminal_reconcile_errors_total{SEL}[5m])) by (controller)',
          legend: '{{controller}} terminal',
        },
      ],
    },
    {
      title: 'Reconcile latency (p50/p90/p99)',
      unit: 's',
      targets: quantiles('controller_runtime_reconcile_time_seconds', 'controller'),
    },
    {
      title: 'Workers (active / max)',
      unit: 'short',
      targets: [
        { expr: 'sum(controller_runtime_active_workers{SEL}) by (controller)', legend: '{{controller}} active' },
        {
          expr: 'sum(controller_runtime_max_concurrent_reconciles{SEL}) by (controller)',
          legend: '{{controller}} max',
        },
      ],
    },
    {
      title: 'Work queue depth',
      unit: 'short',
      targets: [{ expr: 'sum(workqueue_depth{SEL}) by (name)', legend: '{{name}}' }],
    },
    {
      title: 'Work queue add rate / retries',
      unit: 'ops',
      targets: [
        { expr: 'sum(rate(workqueue_adds_total{SEL}[5m])) by (name)', legend: '{{name}} adds' },
        { expr: 'sum(rate(workqueue_retries_total{SEL}[5m])) by (name)', legend: '{{name}} retries' },
      ],
    },
    {
      title: 'Work queue latency (time in queue)',
      unit: 's',
      targets: quantiles('workqueue_queue_duration_seconds', 'name'),
    },
    { title: 'Work duration (processing)', unit: 's', targets: quantiles('workqueue_work_duration_seconds', 'name') },
  ]);
  const resources = dashboard(p, 'controller-resources', `${p.projectName}: manager resources`, [
    {
      title: 'CPU usage',
      unit: 'percentunit',
      targets: [{ expr: 'rate(process_cpu_seconds_total{SEL}[5m])', legend: '{{pod}}' }],
    },
    {
      title: 'Resident memory',
      unit: 'bytes',
      targets: [{ expr: 'process_resident_memory_bytes{SEL}', legend: '{{pod}}' }],
    },
    {
      title: 'Heap used',
      unit: 'bytes',
      targets: [{ expr: 'sum(nodejs_heap_size_used_bytes{SEL}) by (pod)', legend: '{{pod}}' }],
    },
    {
      title: 'Event loop lag (p99)',
      unit: 's',
      targets: [{ expr: 'nodejs_eventloop_lag_p99_seconds{SEL}', legend: '{{pod}}' }],
    },
    {
      title: 'API requests by code',
      unit: 'ops',
      targets: [
        { expr: 'sum(rate(rest_client_requests_total{SEL}[5m])) by (code, method)', legend: '{{method}} {{code}}' },
      ],
    },
  ]);
  return {
    'config/grafana/kustomization.yaml': `# [GRAFANA] Dashboards for the controller-runtime metrics, as a ConfigMap picked up by the Grafana dashboard
# sidecar (label grafana_dashboard: "1"). You can also import the JSON files in Grafana by hand.
configMapGenerator:
- name: grafana-dashboards
  files:
  - controller-runtime-metrics.json
  - controller-resources-metrics.json
  options:
    disableNameSuffixHash: true
    labels:
      grafana_dashboard: "1"
`,
    'config/grafana/controller-runtime-metrics.json': runtime,
    'config/grafana/controller-resources-metrics.json': resources,
  };
}
