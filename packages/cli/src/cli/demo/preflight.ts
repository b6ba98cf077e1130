/**
 * What would stop the demo, checked before any slow step (starting the API, applying RBAC, the manager) and
 * reported all at once, each with the flag that changes it: another demo on the state directory, and addresses
 * already in use.
 */
import net from 'node:net';
import { isDisabled, parseBindAddress } from 'ctrlmetrics/internal';
import { lockHolder, lockedMessage } from './lock.js';

export interface PreflightOptions {
  stateDir: string;
  /** Set when running against a cluster: no state-dir lock, no embedded API. */
  kubeconfig?: string;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  apiListen: string;
  /** `--prometheus`: its address must be free too. */
  prometheus?: boolean;
  prometheusAddress?: string;
}

/** Whether `host:port` can be listened on now (port 0 always can). */
function inUse(address: string): Promise<string | undefined> {
  let host: string | undefined;
  let port: number;
  try {
    ({ host, port } = parseBindAddress(address));
  } catch {
    return Promise.resolve(undefined); // the server's own start reports a malformed address
  }
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      resolve(
        err.code === 'EADDRINUSE'
          ? 'is already in use'
          : err.code === 'EACCES'
            ? 'needs privileges (use a port above 1023)'
            : undefined,
      ),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/** Every conflict found, one sentence each (empty when the demo can start). */
export async function demoConflicts(o: PreflightOptions): Promise<string[]> {
  const checks: Array<Promise<string | undefined>> = [];
  if (!o.kubeconfig)
    checks.push(lockHolder(o.stateDir).then((pid) => (pid === undefined ? undefined : lockedMessage(o.stateDir, pid))));
  const address = (addr: string, what: string, flag: string) =>
    inUse(addr).then((why) =>
      why ? `the ${what} address ${addr} ${why}: stop the process using it, or pick another with ${flag}` : undefined,
    );
  if (!isDisabled(o.metricsBindAddress))
    checks.push(address(o.metricsBindAddress, 'metrics', '--metrics-bind-address'));
  if (!isDisabled(o.healthProbeBindAddress))
    checks.push(address(o.healthProbeBindAddress, 'health probe', '--health-probe-bind-address'));
  if (!o.kubeconfig) checks.push(address(o.apiListen, 'embedded API', '--api-listen'));
  if (o.prometheus && o.prometheusAddress)
    checks.push(address(o.prometheusAddress, 'Prometheus', '--prometheus-address'));
  return (await Promise.all(checks)).filter((c): c is string => c !== undefined);
}
