/** What the benchmark ran on: recorded with every result, as the numbers mean little without it. */
import { cpus, loadavg, release, totalmem } from 'node:os';
import { runCapture } from './children.js';

export interface MachineInfo {
  date: string;
  nproc: number;
  cpuModel: string;
  memGiB: number;
  kernel: string;
  node: string;
  go: string;
  wrk: string;
  promClient: string;
  loadAvgAtStart: number[];
}

async function firstLine(cmd: string, args: string[]): Promise<string> {
  try {
    const r = await runCapture(cmd, args, { timeoutMs: 10_000 });
    return (r.stdout + r.stderr).trim().split('\n')[0] ?? '';
  } catch {
    return 'not found';
  }
}

export async function machineInfo(promClientVersion: string): Promise<MachineInfo> {
  const c = cpus();
  return {
    date: new Date().toISOString(),
    nproc: c.length,
    cpuModel: c[0]?.model.trim() ?? 'unknown',
    memGiB: Math.round(totalmem() / 1024 ** 3),
    kernel: release(),
    node: process.version,
    go: await firstLine('go', ['version']),
    wrk: await firstLine('wrk', ['-v']),
    promClient: promClientVersion,
    loadAvgAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}
