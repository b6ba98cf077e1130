/** The benchmark matrix: registry sizes, encodings, connection counts, and the server variants of one cell. */

/** Registry sizes: N children per vector (K = 10 counter + 10 histogram vectors), ≈ 15·K·N sample lines. */
export const SIZES = { '1k': 7, '10k': 67, '100k': 667 } as const;
export type SizeName = keyof typeof SIZES;

export type Encoding = 'plain' | 'gzip';

/** Prometheus 2.42's scrape Accept header (OpenMetrics preferred). */
export const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
export const TEXT_ACCEPT = 'text/plain;version=0.0.4';
/** Prometheus 2.42's scrape Accept header with `--enable-feature=native-histograms` (protobuf preferred; read from its binary). */
export const PROTOBUF_ACCEPT =
  'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

/** Which server and which request headers. */
export interface Variant {
  /** Key in the results: go, go-protobuf, prom-client, ours, ours-text, ours-protobuf, ours-nofilter, ours-control. */
  key: string;
  /** The running server it scrapes. */
  server: 'go' | 'prom-client' | 'ours' | 'ours-nofilter' | 'ours-control';
  accept: string;
  /** One-line description for the report. */
  label: string;
  /** Connection counts it is measured at. */
  conns: readonly number[];
  /** Measured only when named with --variants. */
  optIn?: boolean;
}

export function variants(conns: readonly number[]): Variant[] {
  return [
    {
      key: 'go',
      server: 'go',
      accept: PROMETHEUS_ACCEPT,
      label: 'Go client_golang promhttp (serves text 0.0.4)',
      conns,
    },
    {
      key: 'prom-client',
      server: 'prom-client',
      accept: PROMETHEUS_ACCEPT,
      label: 'prom-client 15 + node:https (serves text 0.0.4)',
      conns,
    },
    {
      key: 'ours',
      server: 'ours',
      accept: PROMETHEUS_ACCEPT,
      label: 'ours, filter on, Prometheus Accept → OpenMetrics',
      conns,
    },
    { key: 'ours-text', server: 'ours', accept: TEXT_ACCEPT, label: 'ours, filter on, Accept text/plain 0.0.4', conns },
    {
      key: 'go-protobuf',
      server: 'go',
      accept: PROTOBUF_ACCEPT,
      label: 'Go client_golang promhttp, Prometheus native-histogram Accept → protobuf',
      conns,
    },
    {
      key: 'ours-protobuf',
      server: 'ours',
      accept: PROTOBUF_ACCEPT,
      label: 'ours, filter on, Prometheus native-histogram Accept → protobuf',
      conns,
    },
    {
      key: 'ours-nofilter',
      server: 'ours-nofilter',
      accept: PROMETHEUS_ACCEPT,
      label: 'ours, no filter (a second listener of the same process), OpenMetrics: the filter-cost baseline',
      conns,
    },
    {
      key: 'ours-control',
      server: 'ours-control',
      accept: PROMETHEUS_ACCEPT,
      label:
        'ours, no filter (a third listener of the same process), OpenMetrics: A/A control of the baseline, shows the noise floor',
      conns,
      optIn: true,
    },
  ];
}

/** Request headers of a variant's runs; the Authorization value is added by the caller and never recorded. */
export function requestHeaders(v: Variant, enc: Encoding): Record<string, string> {
  return { Accept: v.accept, ...(enc === 'gzip' ? { 'Accept-Encoding': 'gzip' } : {}) };
}

/** Order of the variants in repetition `rep`: alternated (reversed every other rep) and rotated, so no peer always goes first. */
export function orderFor<T>(items: readonly T[], rep: number): T[] {
  const base = rep % 2 ? [...items].reverse() : [...items];
  const shift = Math.floor(rep / 2) % Math.max(1, base.length);
  return [...base.slice(shift), ...base.slice(0, shift)];
}

export function cellKey(size: SizeName, enc: Encoding, conns: number): string {
  return `${size}|${enc}|c${conns}`;
}
