/**
 * Structured logging, one entry per line: JSON objects (like controller-runtime's zap JSON encoder, the default) or
 * zap's development console layout (time, LEVEL, logger, message, fields as JSON), chosen with
 * {@link configureLogging} (see `log-flags.ts` for the `--zap-*` flags).
 *
 * Secrets never reach the output: fields whose name suggests a credential are replaced with `[REDACTED]`,
 * and string values that look like a bearer token or a PEM private key are masked as well.
 */

/** Log severity, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Where log lines go; defaults to stderr. Tests replace it to capture output. */
export type LogSink = (line: string) => void;

/** A logger bound to a name and a set of fields. */
export interface Logger {
  /** A line at debug level (controller-runtime's V(1)): reconcile details. */
  debug(msg: string, fields?: Record<string, unknown>): void;
  /** A line at info level. */
  info(msg: string, fields?: Record<string, unknown>): void;
  /** A line at warn level. */
  warn(msg: string, fields?: Record<string, unknown>): void;
  /** A line at error level (with a stack trace at the stacktrace level). */
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A child logger whose name is `parent.name` and whose lines carry `fields`. */
  child(name: string, fields?: Record<string, unknown>): Logger;
}

const SECRET_KEY = /(token|authorization|password|secret|private|^key$|keyPem|bearer|credential)/i;
const BEARER = /\b(Bearer)\s+[^\s"]+/gi;
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;
const JWT = /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g;

let sink: LogSink = (line) => process.stderr.write(line + '\n');
/** `CTRLMETRICS_LOG_LEVEL`, when it names a level: the level until {@link configureLogging} is given another. */
const ENV_LEVEL = Object.hasOwn(LEVELS, process.env.CTRLMETRICS_LOG_LEVEL ?? '')
  ? (process.env.CTRLMETRICS_LOG_LEVEL as LogLevel)
  : undefined;
let threshold = LEVELS[ENV_LEVEL ?? 'info'];
/** Entries at or above this level carry a stack trace (zap's stacktrace level); Infinity: none. */
let stackThreshold = Infinity;
let encoder: LogEncoder = 'json';
let timeEncoding: TimeEncoding = 'iso8601';

/** How entries are written: JSON objects, or zap's human-readable console layout. */
export type LogEncoder = 'json' | 'console';
/** zap's time encodings: seconds, milliseconds or nanoseconds since the epoch (numbers), or formatted UTC text. */
export type TimeEncoding = 'epoch' | 'millis' | 'nano' | 'iso8601' | 'rfc3339' | 'rfc3339nano';
/** A level to log at, or `panic`: above every level ctrlmetrics writes (zap's panic level), i.e. silence. */
export type LogThreshold = LogLevel | 'panic';

/** What {@link configureLogging} sets; each field absent takes zap's default for the mode. */
export interface LogOptions {
  /**
   * zap's development mode: console encoder, debug level, stack traces from warn. Otherwise production: JSON
   * (console on a terminal), info level, stack traces from error.
   */
  development?: boolean;
  encoder?: LogEncoder;
  level?: LogThreshold;
  stacktraceLevel?: LogThreshold;
  timeEncoding?: TimeEncoding;
}

const rank = (l: LogThreshold): number => (l === 'panic' ? 50 : LEVELS[l]);

/**
 * Configures every logger of the process, as controller-runtime's `zap.New(zap.UseFlagOptions(&opts))` does.
 * `tty`: whether stderr is a terminal (defaults to it); it makes the console encoder the default.
 */
export function configureLogging(o: LogOptions = {}, tty: boolean = process.stderr.isTTY === true): void {
  const dev = o.development === true;
  encoder = o.encoder ?? (dev || tty ? 'console' : 'json');
  threshold = rank(o.level ?? (dev ? 'debug' : (ENV_LEVEL ?? 'info')));
  stackThreshold = rank(o.stacktraceLevel ?? (dev ? 'warn' : 'error'));
  timeEncoding = o.timeEncoding ?? 'iso8601';
}

/** The time as the configured encoding writes it. */
function encodeTime(ms: number): string | number {
  switch (timeEncoding) {
    case 'epoch':
      return ms / 1000;
    case 'millis':
      return ms;
    case 'nano':
      return ms * 1e6;
    case 'rfc3339':
      return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    case 'rfc3339nano':
      // Go's RFC3339Nano drops trailing zeros of the fraction (and the dot when none is left)
      return new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
    default:
      return new Date(ms).toISOString();
  }
}

/** The caller's stack without the logger's own frames. */
function stackTrace(): string {
  const lines = (new Error().stack ?? '').split('\n').slice(1);
  const own = lines.findLastIndex((l) => /util[\\/]log\.[jt]s/.test(l));
  return lines
    .slice(own + 1)
    .map((l) => l.trim())
    .join('\n');
}

/** Replaces the output of every logger (returns the previous sink). */
export function setLogSink(next: LogSink): LogSink {
  const prev = sink;
  sink = next;
  return prev;
}

/** Sets the lowest level that is written. */
export function setLogLevel(level: LogLevel): void {
  threshold = LEVELS[level];
}

/** Masks bearer tokens, JWTs and PEM private keys inside a free-form string. */
export function redactString(s: string): string {
  return s.replace(PEM_KEY, '[REDACTED PRIVATE KEY]').replace(BEARER, '$1 [REDACTED]').replace(JWT, '[REDACTED JWT]');
}

function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value instanceof Error) return redactString(value.message);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] =
      SECRET_KEY.test(k) && v !== undefined && typeof v !== 'boolean' && typeof v !== 'number'
        ? '[REDACTED]'
        : redact(v, depth + 1);
  }
  return out;
}

class JsonLogger implements Logger {
  constructor(
    private readonly name: string,
    private readonly fields: Record<string, unknown>,
  ) {}

  private write(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
    if (LEVELS[level] < threshold) return;
    const ts = encodeTime(Date.now());
    const stack = LEVELS[level] >= stackThreshold ? stackTrace() : undefined;
    if (encoder === 'console') {
      const extra = redact({ ...this.fields, ...fields }) as Record<string, unknown>;
      const tail = Object.keys(extra).length ? `\t${JSON.stringify(extra)}` : '';
      sink(`${ts}\t${level.toUpperCase()}\t${this.name}\t${redactString(msg)}${tail}${stack ? `\n${stack}` : ''}`);
      return;
    }
    const entry = redact({
      ts,
      level,
      logger: this.name,
      msg,
      ...this.fields,
      ...fields,
      ...(stack ? { stacktrace: stack } : {}),
    });
    sink(JSON.stringify(entry));
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.write('debug', msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.write('info', msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.write('warn', msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.write('error', msg, fields);
  }
  child(name: string, fields?: Record<string, unknown>): Logger {
    return new JsonLogger(this.name ? `${this.name}.${name}` : name, { ...this.fields, ...fields });
  }
}

/** Creates a logger with the given name (e.g. `controller-runtime.metrics`). */
export function createLogger(name: string, fields: Record<string, unknown> = {}): Logger {
  return new JsonLogger(name, fields);
}
