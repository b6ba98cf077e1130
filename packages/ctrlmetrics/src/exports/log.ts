/**
 * Logging (controller-runtime's `pkg/log` and `pkg/log/zap`): structured loggers, their sink and level, and the
 * `--zap-*` flags a manager's command line takes, parsed as Go parses them.
 * @module ctrlmetrics/log
 */
export { createLogger, setLogSink, setLogLevel, configureLogging } from '../util/log.js';
export type { Logger, LogLevel, LogSink, LogOptions, LogEncoder, LogThreshold, TimeEncoding } from '../util/log.js';
export { ZAP_FLAGS, setZapFlag, type ZapFlag } from '../util/log-flags.js';
export { parseGoBool } from '../util/go-bool.js';
