/**
 * Expected failures of the cluster-side operations, raised here and turned into exit codes by the CLI (`src/cli`,
 * the floor above): the message is one line that says what to do.
 */
import { CtrlmetricsError } from 'ctrlmetrics/internal';

/** An operation failed (an API answer, a missing object, a refused request). */
export class OpsError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_OPS';
  override name = 'OpsError';
}

/** The operation was asked for wrongly (a bad flag value): the CLI adds the command's help hint. */
export class OpsUsageError extends OpsError {
  static override readonly code: string = 'ERR_OPS_USAGE';
  override name = 'OpsUsageError';
}
