/**
 * Every process the benchmark starts is registered here and killed when the run ends — normally, on an error,
 * or on SIGINT/SIGTERM — so a benchmark never leaves a server or a wrk behind.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

const live = new Set<ChildProcess>();
let hooksInstalled = false;

/** Starts a child process and tracks it until it exits. */
export function spawnTracked(cmd: string, args: readonly string[], opts: SpawnOptions = {}): ChildProcess {
  installHooks();
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  live.add(child);
  child.once('exit', () => live.delete(child));
  child.once('error', () => live.delete(child));
  return child;
}

/**
 * Reads a fixture's stdout as JSON lines, calling `onLine` with each object (other lines are skipped), and keeps the
 * tail of its stderr; answers a function that returns that tail (for error messages).
 */
export function readJsonLines<T>(child: ChildProcess, onLine: (line: T) => void): () => string {
  let buf = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let parsed: T;
      try {
        parsed = JSON.parse(line) as T;
      } catch {
        continue; // not one of the fixture's lines
      }
      onLine(parsed);
    }
  });
  return () => err;
}

/** Sends SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export async function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}

/** Stops every tracked child that is still running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => stopChild(c)));
}

/** Synchronous last resort (process 'exit' handlers cannot await). */
function killAllNow(): void {
  for (const c of live) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.once('exit', killAllNow);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      process.stderr.write(`\nbench: ${sig}, stopping ${live.size} child process(es)\n`);
      void stopAll().finally(() => process.exit(130));
    });
  }
}

/** Runs a command to completion with a hard time limit; returns exit code and output. */
export function runCapture(
  cmd: string,
  args: readonly string[],
  opts: { timeoutMs: number; input?: string | Buffer; env?: NodeJS.ProcessEnv; cwd?: string },
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(cmd, args, {
      stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
    if (opts.input !== undefined) {
      child.stdin!.on('error', () => {
        /* the command may exit before reading everything (e.g. promtool on a parse error) */
      });
      child.stdin!.end(opts.input);
    }
  });
}
