/**
 * Captures every log line of the process at debug level, so a suite can assert that no secret it used (bearer
 * tokens, private keys, raw Authorization values) ever reached a log line, at any level.
 */
import { setLogLevel, setLogSink, type Logger } from '../../packages/ctrlmetrics/src/util/log.js';

/** A logger that keeps only its error lines (and its children's), for a component given a logger of its own. */
export function errorLines(): { lines: Array<{ msg: string; fields?: Record<string, unknown> }>; logger: Logger } {
  const lines: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (msg: string, fields?: Record<string, unknown>) => lines.push({ msg, fields }),
    child: () => logger,
  } as unknown as Logger;
  return { lines, logger };
}

export class LogCapture {
  readonly lines: string[] = [];
  private readonly secrets = new Set<string>();
  private readonly previous: ReturnType<typeof setLogSink>;

  constructor() {
    setLogLevel('debug');
    this.previous = setLogSink((line) => {
      // bounded: a runaway logger must not exhaust memory during load tests
      if (this.lines.length < 200_000) this.lines.push(line);
    });
  }

  /** Remembers a secret (ignored when shorter than 8 characters: too likely to match by chance). */
  secret(s: string): string {
    if (s.length >= 8) this.secrets.add(s);
    return s;
  }

  /** Also checks output captured elsewhere (e.g. a child process's stderr). */
  addText(text: string): void {
    for (const line of text.split('\n')) if (line) this.lines.push(line);
  }

  /** Lines that contain a remembered secret, a PEM private key or a JWT-looking string. */
  leaks(): string[] {
    const out: string[] = [];
    for (const line of this.lines) {
      if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(line) || /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\./.test(line))
        out.push(line);
      else
        for (const s of this.secrets)
          if (line.includes(s) || line.includes(s.slice(0, 40))) {
            out.push(line);
            break;
          }
    }
    return out;
  }

  restore(): void {
    setLogSink(this.previous);
  }
}
