/** `ctrlmetrics token`: a TokenRequest for a service account (what `kubectl create token` does). */
import type { KubeClient } from 'ctrlmetrics/client';
import { OpsError } from './errors.js';
import { apiError, isStatus } from './kube.js';

/** What to ask for. */
export interface TokenRequestSpec {
  namespace: string;
  serviceAccount: string;
  /** Lifetime in seconds; undefined lets the server choose (usually 1 h). */
  expirationSeconds?: number;
  audiences?: string[];
}

/** A TokenRequest as the API server answers it (what `kubectl create token -o json` prints). */
export interface TokenRequest {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown>;
  spec?: Record<string, unknown>;
  status?: { token?: string; expirationTimestamp?: string };
}

/** Requests the token; errors say whether the service account is missing or the caller may not ask. */
export async function requestServiceAccountToken(client: KubeClient, spec: TokenRequestSpec): Promise<string> {
  const res = await requestTokenRequest(client, spec);
  return res.status!.token!;
}

/** Like {@link requestServiceAccountToken}, returning the whole TokenRequest the server answered (with a token). */
export async function requestTokenRequest(client: KubeClient, spec: TokenRequestSpec): Promise<TokenRequest> {
  const ns = spec.namespace;
  const name = spec.serviceAccount;
  const body = {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    metadata: { creationTimestamp: null },
    spec: {
      ...(spec.audiences?.length ? { audiences: spec.audiences } : {}),
      ...(spec.expirationSeconds ? { expirationSeconds: spec.expirationSeconds } : {}),
    },
  };
  try {
    const res = await client.create<TokenRequest>(
      `/api/v1/namespaces/${encodeURIComponent(ns)}/serviceaccounts/${encodeURIComponent(name)}/token`,
      body,
      { timeoutMs: 15_000 },
    );
    if (!res.status?.token) throw new OpsError(`the API returned no token for serviceaccount ${ns}/${name}`);
    return res;
  } catch (err) {
    if (isStatus(err, 404)) {
      throw new OpsError(
        `serviceaccount "${name}" not found in namespace "${ns}": create it with kubectl create serviceaccount ${name} -n ${ns}`,
      );
    }
    if (isStatus(err, 403)) {
      throw new OpsError(
        `cannot create a token for serviceaccount ${ns}/${name}: forbidden (${err.message}); the caller needs create on serviceaccounts/token in ${ns}`,
      );
    }
    throw apiError(err, `cannot create a token for serviceaccount ${ns}/${name}`, client);
  }
}
