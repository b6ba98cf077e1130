/** An expected CLI failure: printed as one `error: …` line on stderr, with the given exit code. */
export class CliError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_CLI';
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
    options?: CtrlmetricsErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A bad flag or argument: `error: …` and kubectl's `See 'ctrlmetrics <command> --help' for usage.`, exit 1 as
 * kubectl exits for every error, usage errors included.
 */
import { CtrlmetricsError, type CtrlmetricsErrorOptions } from 'ctrlmetrics/internal';
export class UsageError extends CliError {
  static override readonly code: string = 'ERR_USAGE';
  override name = 'UsageError';
  constructor(message: string, options?: CtrlmetricsErrorOptions) {
    super(message, 1, options);
  }
}
