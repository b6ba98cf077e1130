/**
 * An admission client for tests: POSTs an AdmissionReview v1 over HTTPS as kube-apiserver does (Content-Type
 * application/json) and returns the decoded `response`, the patch decoded from base64.
 */
import { request } from 'node:https';

export interface AdmissionAnswer {
  uid: string;
  allowed: boolean;
  status: Record<string, unknown>;
  /** The JSON Patch operations, decoded. */
  patch?: Array<{ op: string; path: string; value?: unknown }>;
  patchType?: string;
  warnings?: string[];
}

/** The review's `request`: uid, kind, resource and userInfo are filled in for a Memcached CREATE unless given. */
export function admit(url: string, path: string, req: Record<string, unknown>, ca: string): Promise<AdmissionAnswer> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u-1',
      kind: { group: 'cache.example.com', version: 'v1alpha1', kind: 'Memcached' },
      resource: { group: 'cache.example.com', version: 'v1alpha1', resource: 'memcacheds' },
      operation: 'CREATE',
      userInfo: { username: 'alice' },
      ...req,
    },
  });
  return new Promise((resolve, reject) => {
    const r = request(
      `${url}${path}`,
      {
        method: 'POST',
        ca,
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => {
          try {
            const response = JSON.parse(text).response;
            resolve({
              ...response,
              patch: response.patch ? JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) : undefined,
            });
          } catch (err) {
            reject(
              new Error(
                `not an AdmissionReview (HTTP ${res.statusCode}): ${text.slice(0, 200)} (${(err as Error).message})`,
              ),
            );
          }
        });
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}
