/** An expected CLI failure: printed as one `error: …` line on stderr, with the given exit code. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/**
 * A bad flag or argument: `error: …` and kubectl's `See 'ctrlmetrics <command> --help' for usage.`, exit 1 as
 * kubectl exits for every error, usage errors included.
 */
export class UsageError extends CliError {
  override name = 'UsageError';
  constructor(message: string) {
    super(message, 1);
  }
}
