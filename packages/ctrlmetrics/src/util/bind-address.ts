/**
 * Parsing Go-style bind addresses: `:8081` (all interfaces), `127.0.0.1:8081`, `[::1]:8081`, `localhost:0`.
 */

/** A parsed bind address; `host` undefined = all interfaces. */
export interface BindAddress {
  host: string | undefined;
  port: number;
}

/** Parses `host:port` / `:port` / `[v6]:port`; throws a clear error on anything else. */
export function parseBindAddress(addr: string): BindAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(addr.trim());
  if (!m) throw new Error(`invalid bind address ${JSON.stringify(addr)}: use host:port, :port or [ipv6]:port`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid bind address ${JSON.stringify(addr)}: port ${port} is out of range`);
  const host = m[1] ?? (m[2] || undefined);
  return { host, port };
}

/** True when the address disables the server (`0` or empty, as in controller-runtime). */
export function isDisabled(addr: string | undefined): boolean {
  return addr === undefined || addr === '' || addr === '0';
}
