/** Booleans as Go's `strconv.ParseBool` (and so the `flag` package) reads them. */

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * `1`, `t`, `T`, `TRUE`, `true`, `True` and the false forms `0`, `f`, `F`, `FALSE`, `false`, `False`; anything
 * else (`yes`, `tRuE`) is undefined, for the caller to report.
 */
export function parseGoBool(value: string): boolean | undefined {
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  return undefined;
}
