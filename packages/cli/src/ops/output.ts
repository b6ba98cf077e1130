/** kubectl's output conventions: `-o yaml|json|name`, tables padded like its tabwriter, and the AGE column. */
import { stringify } from 'yaml';
import { OpsUsageError } from './errors.js';

/** The `-o` formats the operations commands accept. */
export type OutputFormat = 'yaml' | 'json' | 'name' | 'wide';

/** Validates an `-o` value. */
export function parseOutput(
  value: string | undefined,
  allowed: readonly OutputFormat[] = ['yaml', 'json', 'name'],
): OutputFormat | undefined {
  if (value === undefined || value === '') return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as OutputFormat;
  throw new OpsUsageError(
    `unable to match a printer suitable for the output format "${value}", allowed formats are: ${allowed.join(',')}`,
  );
}

/** Validates `--dry-run`: only `client` (and `none`) are supported; true when it is a client dry run. */
export function parseDryRun(value: string | boolean | undefined): boolean {
  if (value === undefined || value === false || value === 'none') return false;
  if (value === true || value === 'client') return true;
  if (value === 'server') throw new OpsUsageError('--dry-run=server is not supported: use --dry-run=client');
  throw new OpsUsageError(`invalid --dry-run value ${JSON.stringify(value)}: must be "none" or "client"`);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

/** YAML as kubectl prints it: keys sorted, sequences not indented under their key. */
export function toKubectlYaml(obj: unknown): string {
  return stringify(sortKeys(obj), { version: '1.1', indentSeq: false, lineWidth: 0, nullStr: 'null' });
}

/** JSON as kubectl prints it: 4-space indentation, fields in the object's own order. */
export function toKubectlJson(obj: unknown): string {
  return JSON.stringify(obj, null, 4) + '\n';
}

/** `kind.group/name` as `kubectl -o name` prints it (`clusterrolebinding.rbac.authorization.k8s.io/x`). */
export function resourceName(resource: string, group: string, name: string): string {
  return `${resource}${group ? '.' + group : ''}/${name}`;
}

/** The object without `metadata.managedFields`, which kubectl hides unless asked (`--show-managed-fields`). */
function withoutManagedFields(obj: unknown): unknown {
  const items = obj && typeof obj === 'object' ? (obj as { items?: unknown }).items : undefined;
  if (Array.isArray(items)) return { ...(obj as object), items: items.map(withoutManagedFields) };
  const meta = obj && typeof obj === 'object' ? (obj as { metadata?: unknown }).metadata : undefined;
  if (!meta || typeof meta !== 'object' || !('managedFields' in meta)) return obj;
  const { managedFields: _mf, ...rest } = meta as Record<string, unknown>;
  return { ...(obj as object), metadata: rest };
}

/** Prints an object in the requested format, as kubectl does (managed fields hidden). */
export function formatObject(obj: unknown, format: OutputFormat, name: string): string {
  if (format === 'yaml') return toKubectlYaml(withoutManagedFields(obj));
  if (format === 'json') return toKubectlJson(withoutManagedFields(obj));
  return name + '\n';
}

/**
 * A table as kubectl prints it (its tabwriter: cells padded by 3 spaces, at least 6 wide; the last column unpadded).
 */
export function formatTable(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(6, ...all.map((r) => (r[i] ?? '').length + 3)));
  return (
    all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('')).join('\n') + '\n'
  );
}

/** kubectl's AGE: a short, coarser-with-time duration (`45s`, `3m12s`, `25m`, `5h3m`, `3d4h`, `2y10d`). */
export function humanAge(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** Go-style durations as kubectl flags take them (`90s`, `10m`, `1h30m`, `500ms`); a bare number is seconds. */
export function parseDuration(value: string, flag: string): number {
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = v;
  const re = /^(\d+(?:\.\d+)?)(ms|s|m|h)/;
  if (!rest) throw new OpsUsageError(`${flag}: empty duration`);
  while (rest) {
    const m = re.exec(rest);
    if (!m) throw new OpsUsageError(`${flag}: invalid duration ${JSON.stringify(value)} (use e.g. 30s, 10m, 1h)`);
    total += Number(m[1]) * unit[m[2]];
    rest = rest.slice(m[0].length);
  }
  return total;
}
