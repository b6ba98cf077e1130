/**
 * The base of the library's errors: a stable `code` to branch on (message texts change; codes do not), the error
 * it wraps as `cause` (ES2022), and `instanceof` that holds across two copies of the library in one application
 * (two versions resolved by the package manager, or a bundled and an installed one), where class identity does
 * not: each error carries the codes of its class and of the classes above it under a `Symbol.for` key, which
 * every copy shares, and `instanceof` asks for them.
 */

/** Where an error keeps the codes of its class chain (global: every copy of the library finds it). */
const CODES = Symbol.for('ctrlmetrics.error.codes');

/** Options of a {@link CtrlmetricsError}. */
export interface CtrlmetricsErrorOptions {
  /** The error this one wraps. */
  cause?: unknown;
}

/**
 * The base class of the library's errors. A subclass names its `code` with a static property (`static readonly
 * code = 'ERR_…'`); an instance's `code` is its class's.
 */
export class CtrlmetricsError extends Error {
  /** The code of errors of this class. */
  static readonly code: string = 'ERR_CTRLMETRICS';

  /** What went wrong, stable across releases: the code of the error's class. */
  readonly code: string;

  constructor(message: string, options?: CtrlmetricsErrorOptions) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    const codes: string[] = [];
    // the classes' own codes only: a subclass that names none is told apart by its prototype, as any class
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) {
      const code = Object.hasOwn(c, 'code') ? (c as { code?: unknown }).code : undefined;
      if (typeof code === 'string' && !codes.includes(code)) codes.push(code);
    }
    this.code = codes[0] ?? CtrlmetricsError.code;
    Object.defineProperty(this, CODES, { value: codes, enumerable: false });
    this.name = new.target.name;
  }

  /** `err instanceof SomeError`: by the codes the error carries, so an error of another copy of the library counts. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== 'object' || value === null) return false;
    const codes = (value as { [CODES]?: unknown })[CODES];
    if (!Array.isArray(codes) || !Object.hasOwn(this, 'code'))
      return Function.prototype[Symbol.hasInstance].call(this, value);
    return this === CtrlmetricsError || codes.includes((this as unknown as { code: string }).code);
  }
}

/** The error chain from `err` down its causes (at most 10 links: a cause may point back). */
export function causeChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (
    let e: unknown = err;
    e !== undefined && e !== null && out.length < 10 && !out.includes(e);
    e = (e as { cause?: unknown }).cause
  )
    out.push(e);
  return out;
}
