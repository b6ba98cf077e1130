/**
 * controller-runtime's zap flags (`zap.Options.BindFlags`) for a manager's command line: `--zap-devel`,
 * `--zap-encoder`, `--zap-log-level`, `--zap-stacktrace-level`, `--zap-time-encoding`, with their values and
 * error messages, filling the {@link LogOptions} that {@link configureLogging} applies.
 */
import { parseGoBool } from './go-bool.js';
import type { LogOptions, LogThreshold, TimeEncoding } from './log.js';

/** One zap flag: its help text and whether it is a boolean (`--flag` alone means true). */
export interface ZapFlag {
  help: string;
  boolean?: boolean;
}

/** The flags by name (without dashes), in controller-runtime's order. */
export const ZAP_FLAGS: Readonly<Record<string, ZapFlag>> = {
  'zap-devel': {
    boolean: true,
    help: 'Development mode defaults (encoder=console, log level=debug, stacktrace level=warn); production mode defaults (encoder=json, or console on a terminal; log level=info; stacktrace level=error).',
  },
  'zap-encoder': { help: "Log encoding: 'json' or 'console'." },
  'zap-log-level': {
    help: "Verbosity of logging: 'debug', 'info', 'error', 'panic', or an integer > 0 (debug and more verbose levels).",
  },
  'zap-stacktrace-level': { help: "Level at and above which stack traces are logged: 'info', 'error' or 'panic'." },
  'zap-time-encoding': {
    help: "Time format: 'epoch', 'millis', 'nano', 'iso8601', 'rfc3339' or 'rfc3339nano' (default iso8601).",
  },
};

const TIME_ENCODINGS: readonly TimeEncoding[] = ['epoch', 'millis', 'nano', 'iso8601', 'rfc3339', 'rfc3339nano'];

function level(value: string, what: string, allowed: readonly LogThreshold[], integers: boolean): LogThreshold {
  const v = value.toLowerCase();
  if ((allowed as readonly string[]).includes(v)) return v as LogThreshold;
  // zap levels below debug are logr verbosities V(2), V(3)…: ctrlmetrics has one debug level, so all map to it
  if (integers && /^\d+$/.test(v) && Number(v) > 0) return 'debug';
  throw new Error(
    `invalid ${what} "${value}": one of ${allowed.map((a) => `'${a}'`).join(', ')}${integers ? ', or an integer > 0' : ''}`,
  );
}

/**
 * Sets one zap flag's value in `o`. Returns false when `name` is not a zap flag (for the caller's own flags);
 * throws an Error saying what the value may be when it is invalid. `value` undefined: a boolean flag given alone.
 */
export function setZapFlag(o: LogOptions, name: string, value: string | undefined): boolean {
  const flag = ZAP_FLAGS[name];
  if (!flag) return false;
  if (value === undefined && !flag.boolean) throw new Error(`flag needs an argument: --${name}`);
  const v = value ?? 'true';
  switch (name) {
    case 'zap-devel': {
      const b = parseGoBool(v);
      if (b === undefined)
        throw new Error(
          `invalid boolean value "${v}" for --${name}: one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False`,
        );
      o.development = b;
      break;
    }
    case 'zap-encoder': {
      const e = v.toLowerCase();
      if (e !== 'json' && e !== 'console') throw new Error(`invalid encoder "${v}": 'json' or 'console'`);
      o.encoder = e;
      break;
    }
    case 'zap-log-level':
      o.level = level(v, 'log level', ['debug', 'info', 'error', 'panic'], true);
      break;
    case 'zap-stacktrace-level':
      o.stacktraceLevel = level(v, 'stacktrace level', ['info', 'error', 'panic'], false);
      break;
    case 'zap-time-encoding': {
      const t = v.toLowerCase() as TimeEncoding;
      if (!TIME_ENCODINGS.includes(t))
        throw new Error(`invalid time encoding "${v}": one of ${TIME_ENCODINGS.map((x) => `'${x}'`).join(', ')}`);
      o.timeEncoding = t;
      break;
    }
  }
  return true;
}
