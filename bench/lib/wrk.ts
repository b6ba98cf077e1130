/** Drives Debian's wrk (HTTP/1.1 keep-alive load generator) pinned to its own core, and parses its report. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCapture } from './children.js';

/** What one wrk run measured. Latencies in milliseconds. */
export interface WrkResult {
  requests: number;
  durationS: number;
  reqPerSec: number;
  p50Ms: number | null;
  p75Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  bytesRead: number;
  non2xx: number;
  socketErrors: { connect: number; read: number; write: number; timeout: number };
}

const TIME_UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const SIZE_UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

function timeMs(value: string, unit: string): number {
  const f = TIME_UNITS[unit];
  if (f === undefined) throw new Error(`unknown wrk time unit ${unit}`);
  return Number(value) * f;
}

/** Parses the text wrk prints with `--latency`. Throws when the summary lines are missing. */
export function parseWrkOutput(out: string): WrkResult {
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h), ([\d.]+)(B|KB|MB|GB|TB) read/.exec(out);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!total || !rps) throw new Error(`unexpected wrk output:\n${out}`);
  const pct = (p: string): number | null => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm').exec(out);
    return m ? timeMs(m[1], m[2]) : null;
  };
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: Number(total[1]),
    durationS: timeMs(total[2], total[3]) / 1000,
    reqPerSec: Number(rps[1]),
    p50Ms: pct('50'),
    p75Ms: pct('75'),
    p90Ms: pct('90'),
    p99Ms: pct('99'),
    bytesRead: Number(total[4]) * SIZE_UNITS[total[5]],
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: sock
      ? { connect: Number(sock[1]), read: Number(sock[2]), write: Number(sock[3]), timeout: Number(sock[4]) }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
  };
}

/** One load run. */
export interface WrkRun {
  url: string;
  connections: number;
  durationS: number;
  headers: Record<string, string>;
  /** wrk Lua script that adds the Authorization header (see authorizationScript); never put on the command line. */
  script?: string;
  /** CPU to pin wrk to (taskset -c); undefined: not pinned. */
  cpu?: string;
  timeoutS?: number;
}

/**
 * Writes `authorization` to a file readable only by this user, and a wrk Lua script that reads it into the
 * Authorization header; returns the script's path. A header given with `-H` would be visible in `ps` to every user
 * of the machine while wrk runs.
 */
export function authorizationScript(dir: string, name: string, authorization: string): string {
  const valueFile = join(dir, `${name}.authorization`);
  writeFileSync(valueFile, `${authorization}\n`, { mode: 0o600 });
  const script = join(dir, `${name}-authorization.lua`);
  // a JSON string of a temporary-directory path is also a valid Lua string literal
  const lua = `local f = assert(io.open(${JSON.stringify(valueFile)}, "r"))\nwrk.headers["Authorization"] = f:read("*l")\nf:close()\n`;
  writeFileSync(script, lua, { mode: 0o600 });
  return script;
}

/** The wrk command line for a run (also recorded in the results); credentials come only through `script`. */
export function wrkArgs(run: WrkRun): string[] {
  const args = [
    '-t1',
    `-c${run.connections}`,
    `-d${run.durationS}s`,
    `--timeout`,
    `${run.timeoutS ?? 30}s`,
    '--latency',
  ];
  if (run.script) args.push('-s', run.script);
  for (const [k, v] of Object.entries(run.headers)) {
    if (k.toLowerCase() === 'authorization')
      throw new Error('pass the Authorization header through a script (authorizationScript), not on the command line');
    args.push('-H', `${k}: ${v}`);
  }
  args.push(run.url);
  return run.cpu !== undefined ? ['-c', run.cpu, 'wrk', ...args] : args;
}

/** Runs wrk once (bounded by its duration plus a margin) and parses the result. */
export async function runWrk(run: WrkRun): Promise<WrkResult> {
  const args = wrkArgs(run);
  const cmd = run.cpu !== undefined ? 'taskset' : 'wrk';
  const limitMs = (run.durationS + (run.timeoutS ?? 30) + 15) * 1000;
  const r = await runCapture(cmd, args, { timeoutMs: limitMs });
  if (r.timedOut) throw new Error(`wrk did not finish within ${limitMs} ms`);
  if (r.code !== 0) throw new Error(`wrk exited with ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return parseWrkOutput(r.stdout);
}
