/** One measured load run against one server: wrk figures plus the server's CPU, memory and event-loop delay. */
import { cpuMs, memoryMb, resetPeakRss } from './proc.js';
import type { EventLoopDelay, RunningServer } from './servers.js';
import { runWrk, type WrkResult } from './wrk.js';

export interface RunRecord {
  variant: string;
  size: string;
  enc: string;
  conns: number;
  rep: number;
  reqPerSec: number;
  requests: number;
  p50Ms: number | null;
  p99Ms: number | null;
  /** Server CPU (user+system, all threads) per completed request. */
  cpuMsPerScrape: number | undefined;
  /** Peak RSS during this run (VmHWM after a reset), MB. */
  peakRssMb: number;
  rssAfterMb: number;
  peakIsLifetime: boolean;
  eld?: EventLoopDelay;
  /** Bytes wrk read per request (headers included). */
  bytesPerRequest: number;
  /** non-2xx answers and socket errors: a run with any is flagged invalid. */
  errors: string | undefined;
}

export interface LoadSpec {
  connections: number;
  durationS: number;
  headers: Record<string, string>;
  cpu: string | undefined;
}

/** Runs wrk against `server` while sampling the server; never throws for a bad run (it is recorded as invalid). */
export async function measure(
  server: RunningServer,
  spec: LoadSpec,
  tags: Pick<RunRecord, 'variant' | 'size' | 'enc' | 'conns' | 'rep'>,
): Promise<RunRecord> {
  const peakReset = resetPeakRss(server.pid);
  const cpu0 = cpuMs(server.pid);
  if (server.eld) await server.eld.start();
  let wrk: WrkResult | undefined;
  let failure: string | undefined;
  try {
    wrk = await runWrk({
      url: server.url,
      connections: spec.connections,
      durationS: spec.durationS,
      headers: spec.headers,
      script: server.wrkScript,
      cpu: spec.cpu,
    });
  } catch (e) {
    failure = (e as Error).message;
  }
  const eld = server.eld ? await server.eld.stop() : undefined;
  const cpu1 = cpuMs(server.pid);
  const mem = memoryMb(server.pid);
  const requests = wrk?.requests ?? 0;
  const errs: string[] = [];
  if (failure) errs.push(failure);
  if (wrk && wrk.non2xx > 0) errs.push(`${wrk.non2xx} non-2xx answers`);
  if (wrk) {
    const s = wrk.socketErrors;
    if (s.connect + s.read + s.write + s.timeout > 0)
      errs.push(`socket errors connect ${s.connect} read ${s.read} write ${s.write} timeout ${s.timeout}`);
  }
  if (wrk && requests === 0) errs.push('no request completed');
  return {
    ...tags,
    reqPerSec: wrk?.reqPerSec ?? 0,
    requests,
    p50Ms: wrk?.p50Ms ?? null,
    p99Ms: wrk?.p99Ms ?? null,
    cpuMsPerScrape: requests > 0 ? (cpu1 - cpu0) / requests : undefined,
    peakRssMb: mem.peakMb,
    rssAfterMb: mem.rssMb,
    peakIsLifetime: !peakReset,
    ...(eld ? { eld } : {}),
    bytesPerRequest: wrk && requests > 0 ? wrk.bytesRead / requests : 0,
    errors: errs.length ? errs.join('; ') : undefined,
  };
}
