/** Reads a process's CPU time and memory from /proc (Linux only). */
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

let clkTck: number | undefined;

/** Clock ticks per second of the utime/stime fields (almost always 100). */
export function clockTicks(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/**
 * Parses utime+stime (fields 14 and 15) out of a /proc/PID/stat line, in clock ticks. The command name (field 2)
 * is in parentheses and may contain spaces, so fields are counted after the last ')'.
 */
export function parseStatCpuTicks(stat: string): number {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime is field 14 → rest[11], stime field 15 → rest[12].
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime))
    throw new Error(`cannot parse /proc stat line: ${stat.slice(0, 80)}`);
  return utime + stime;
}

/** CPU time (user + system, all threads) the process has used so far, in milliseconds. */
export function cpuMs(pid: number): number {
  return (parseStatCpuTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) * 1000) / clockTicks();
}

/** Parses `VmRSS` and `VmHWM` (kB) from /proc/PID/status text. */
export function parseStatusMemory(status: string): { rssKb: number; hwmKb: number } {
  const get = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!m) throw new Error(`no ${key} in /proc status`);
    return Number(m[1]);
  };
  return { rssKb: get('VmRSS'), hwmKb: get('VmHWM') };
}

/** Current and peak resident set size of the process, in MB. */
export function memoryMb(pid: number): { rssMb: number; peakMb: number } {
  const { rssKb, hwmKb } = parseStatusMemory(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { rssMb: rssKb / 1024, peakMb: hwmKb / 1024 };
}

/**
 * Resets the process's peak RSS (VmHWM) to its current RSS (`echo 5 > /proc/PID/clear_refs`, Linux ≥ 4.0), so
 * the next reading is the peak of one measured run. Returns false where the kernel does not allow it; the peak is
 * then the process's lifetime peak.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
