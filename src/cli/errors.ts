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
