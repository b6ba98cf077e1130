/**
 * The Memcached API (`cache.example.com/v1alpha1`), as kubebuilder's tutorial defines it. Its CRD,
 * `config/crd/bases/cache.example.com_memcacheds.yaml`, is generated from these types and their markers:
 * `ctrlmetrics generate crd --paths examples/memcached-operator/api.ts --output-dir examples/memcached-operator/config/crd/bases`.
 */
// +groupName=cache.example.com
// +versionName=v1alpha1
import type { Condition, ObjectMeta } from 'ctrlmetrics';
import type { int32, IntOrString } from 'ctrlmetrics/api';

export const MEMCACHED = { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached' } as const;

/** A toleration of the memcached pods. */
export interface Toleration {
  key: string;
  value?: string;
}

/** MemcachedSpec defines the desired state of Memcached. */
export interface MemcachedSpec {
  /** Size is the number of memcached pods. */
  // +kubebuilder:validation:Minimum=1
  // +kubebuilder:validation:Maximum=3
  // +kubebuilder:default=1
  size?: int32;
  // +kubebuilder:validation:MinLength=1
  image: string;
  // +kubebuilder:default=IfNotPresent
  pullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  port?: IntOrString;
  args?: string[];
  // +listType=map
  // +listMapKey=key
  tolerations?: Toleration[];
}

/** MemcachedStatus defines the observed state of Memcached. */
export interface MemcachedStatus {
  replicas?: int32;
  selector?: string;
  // +listType=map
  // +listMapKey=type
  conditions?: Condition[];
}

/** Memcached is the Schema for the memcacheds API. */
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.replicas,selectorpath=.status.selector
export interface Memcached {
  apiVersion: typeof MEMCACHED.apiVersion;
  kind: typeof MEMCACHED.kind;
  metadata: ObjectMeta;
  spec: MemcachedSpec;
  status?: MemcachedStatus;
}
