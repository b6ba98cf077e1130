/** Raised for bad input or an unusable target; the message is one line that says what to do. */
export class ScaffoldError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_SCAFFOLD';
  override name = 'ScaffoldError';
}

import { CtrlmetricsError } from 'ctrlmetrics/internal';
