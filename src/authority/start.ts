/**
 * `startAuthority` as the main entry point exports it: the authority (its HTTPS server, store, PKI and YAML
 * handling, ≈30 MB and ≈100 ms of imports) is loaded on the first call, so a manager that never starts one does
 * not carry it. `ctrlmetrics/authority` exports the authority itself.
 */
import type { Authority, AuthorityOptions } from './index.js';

/**
 * Starts the embedded Kubernetes-API-compatible authority (loaded on first use); see
 * `ctrlmetrics/authority`'s `startAuthority`.
 */
export async function startAuthority(opts: AuthorityOptions = {}): Promise<Authority> {
  const authority = await import('./index.js');
  return authority.startAuthority(opts);
}
