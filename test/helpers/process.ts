/**
 * Child processes for end-to-end and reliability tests: every process is tracked by PID and stopped by
 * {@link ProcessGroup.stopAll} (call it in `after`, so it also runs when a test fails); every wait is bounded.
 */
import { spawn, execFile, type ChildProcess, type SpawnOptions } from 'node:child_process';
import net from 'node:net';

/** The repository root (cwd of `node --import tsx cli.ts ...`). */
export const ROOT = new URL('../../', import.meta.url).pathname;

/** A running child with its captured output. */
export interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** True while the process has not exited. */
  running(): boolean;
  /** Waits (bounded) until stdout+stderr match `re`; rejects early if the process exits. */
  waitForOutput(re: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
}

/** Rejects with a clear message when `p` does not settle within `ms`. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, rej) => {
      t = setTimeout(() => rej(new Error(`${what}: no result within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Calls `probe` every `intervalMs` until it returns a value other than undefined/false, for at most `timeoutMs`.
 * The last error (or "still undefined") is in the rejection message.
 */
export async function eventually<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs: number,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no result yet';
  for (let i = 0; ; i++) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline || i > 100_000) throw new Error(`${what}: not reached within ${timeoutMs} ms (${last})`);
    await sleep(intervalMs);
  }
}

/** A port that was free a moment ago on 127.0.0.1 (for programs that cannot report an ephemeral port). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r, j) => {
    s.once('error', j);
    s.listen(0, '127.0.0.1', () => r());
  });
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Runs a program to completion (bounded); never throws for a non-zero exit. */
export function run(
  file: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      {
        cwd: opts.cwd ?? ROOT,
        env: opts.env ?? process.env,
        timeout: opts.timeoutMs ?? 30_000,
        killSignal: 'SIGKILL',
        maxBuffer: 64 << 20,
      },
      (error, stdout, stderr) => {
        const code = error
          ? typeof (error as NodeJS.ErrnoException & { code?: unknown }).code === 'number'
            ? (error as unknown as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr), timedOut: error?.killed === true });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** tsx's loader, resolved from this repository: `--import tsx` alone resolves from the process's cwd. */
const TSX = import.meta.resolve('tsx');

/**
 * The node arguments that start the CLI: the sources through tsx (`--import tsx cli.ts`), or the build
 * (`dist/cli.js`) when CTRLMETRICS_TEST_BUILT=1 says dist/ was built from this tree just before — `npm test` and
 * CI set it after their build. The build starts in half the time (no transpiling loader), which adds up over the
 * hundreds of CLI processes the suites start.
 */
export function cliArgs(): string[] {
  return process.env.CTRLMETRICS_TEST_BUILT === '1'
    ? [`${ROOT}packages/cli/dist/cli.js`]
    : ['--conditions=ctrlmetrics-source', '--import', TSX, `${ROOT}packages/cli/cli.ts`];
}

/** Runs the CLI ({@link cliArgs}) with `args`, from the repository root unless `cwd` says otherwise (bounded). */
export function runCli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) {
  return run(process.execPath, [...cliArgs(), ...args], {
    cwd: opts.cwd ?? ROOT,
    env: opts.env,
    timeoutMs: opts.timeoutMs ?? 60_000,
  });
}

/** Processes started by one test file. */
export class ProcessGroup {
  private readonly procs: Proc[] = [];

  /** Starts a process with piped output. */
  start(name: string, file: string, args: string[], opts: SpawnOptions = {}): Proc {
    const child = spawn(file, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    if (child.pid === undefined) throw new Error(`${name}: could not start ${file}`);
    let out = '';
    let err = '';
    // bounded capture: keep the last 4 MiB of each stream
    const cap = (s: string) => (s.length > 4 << 20 ? s.slice(-(4 << 20)) : s);
    child.stdout?.on('data', (d: Buffer) => (out = cap(out + d.toString())));
    child.stderr?.on('data', (d: Buffer) => (err = cap(err + d.toString())));
    let exitedFlag = false;
    const exited = new Promise<number | string>((resolve) => {
      child.on('exit', (code, signal) => {
        exitedFlag = true;
        resolve(code ?? signal ?? 'unknown');
      });
      child.on('error', () => {
        exitedFlag = true;
        resolve('spawn-error');
      });
    });
    const proc: Proc = {
      name,
      child,
      pid: child.pid,
      stdout: () => out,
      stderr: () => err,
      exited,
      running: () => !exitedFlag,
      async waitForOutput(re, timeoutMs) {
        return eventually(
          () => {
            const m = re.exec(out + err);
            if (m) return m;
            if (exitedFlag) throw new Error(`${name} exited before printing ${re}: ${(err || out).slice(-2000)}`);
            return undefined;
          },
          `${name}: output ${re}`,
          timeoutMs,
          100,
        );
      },
    };
    this.procs.push(proc);
    return proc;
  }

  /** `node --import tsx cli.ts ...args`. */
  startCli(name: string, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
    return this.start(
      name,
      process.execPath,
      ['--conditions=ctrlmetrics-source', '--import', 'tsx', `${ROOT}packages/cli/cli.ts`, ...args],
      {
        env: { ...process.env, ...env },
      },
    );
  }

  /** Stops one process by PID: SIGTERM, then SIGKILL after `graceMs`. Resolves with its exit code/signal. */
  async stop(p: Proc, graceMs = 10_000): Promise<number | string> {
    if (!p.running()) return p.exited;
    try {
      process.kill(p.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
    const t = setTimeout(() => {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, graceMs);
    try {
      return await p.exited;
    } finally {
      clearTimeout(t);
    }
  }

  /** Stops every process still running (in reverse start order). */
  async stopAll(graceMs = 5_000): Promise<void> {
    for (const p of [...this.procs].reverse()) await this.stop(p, graceMs);
  }
}
