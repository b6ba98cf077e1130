/** Raised for bad input or an unusable target; the message is one line that says what to do. */
export class ScaffoldError extends Error {
  override name = 'ScaffoldError';
}
