/**
 * Structured JSON logging (one object per line, like controller-runtime's zap JSON encoder).
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
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A child logger whose name is `parent.name` and whose lines carry `fields`. */
  child(name: string, fields?: Record<string, unknown>): Logger;
}

const SECRET_KEY = /(token|authorization|password|secret|private|^key$|keyPem|bearer|credential)/i;
const BEARER = /\b(Bearer)\s+[^\s"]+/gi;
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;
const JWT = /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g;

let sink: LogSink = (line) => process.stderr.write(line + '\n');
let threshold = LEVELS[(process.env.CTRLMETRICS_LOG_LEVEL as LogLevel | undefined) ?? 'info'] ?? LEVELS.info;

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
    out[k] = SECRET_KEY.test(k) && v !== undefined && typeof v !== 'boolean' && typeof v !== 'number' ? '[REDACTED]' : redact(v, depth + 1);
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
    const entry = redact({ ts: new Date().toISOString(), level, logger: this.name, msg, ...this.fields, ...fields });
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
