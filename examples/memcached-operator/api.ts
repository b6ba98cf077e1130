/**
 * The Memcached API (`cache.example.com/v1alpha1`), as kubebuilder's tutorial defines it; its CRD is
 * `config/crd/bases/cache.example.com_memcacheds.yaml`.
 */
import type { Condition, ObjectMeta } from '../../src/index.js';

export const MEMCACHED = { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached' } as const;

export interface Memcached {
  apiVersion: typeof MEMCACHED.apiVersion;
  kind: typeof MEMCACHED.kind;
  metadata: ObjectMeta;
  spec: {
    /** Pods of the Deployment, 1–3 (default 1). */
    size?: number;
    image: string;
  };
  status?: {
    conditions?: Condition[];
  };
}
