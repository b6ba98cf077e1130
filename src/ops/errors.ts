/**
 * Expected failures of the cluster-side operations, raised here and turned into exit codes by the CLI (`src/cli`,
 * the floor above): the message is one line that says what to do.
 */

/** An operation failed (an API answer, a missing object, a refused request). */
export class OpsError extends Error {
  override name = 'OpsError';
}

/** The operation was asked for wrongly (a bad flag value): the CLI adds the command's help hint. */
export class OpsUsageError extends OpsError {
  override name = 'OpsUsageError';
}
