/**
 * The Memcached webhooks (kubebuilder's `create webhook --defaulting --programmatic-validation` for this kind):
 * a defaulter that fills `spec.image` when it is absent, and a validator that refuses an image without a tag or
 * digest and warns when `spec.size` is at the CRD's maximum.
 */
import { AdmissionDeniedError, Webhook, type Warnings } from 'ctrlmetrics';
import { MEMCACHED, type Memcached } from './api.js';

/** The image the controller deploys when the Memcached names none. */
export const DEFAULT_IMAGE = 'memcached:1.6.26-alpine3.19';
/** `spec.size`'s maximum in the CRD. */
export const MAX_SIZE = 3;

/** True when the image reference names a tag (`name:tag`, the registry's port aside) or a digest (`name@sha256:…`). */
export function namesTagOrDigest(image: string): boolean {
  if (image.includes('@')) return true;
  const lastPart = image.slice(image.lastIndexOf('/') + 1);
  return lastPart.includes(':');
}

function validate(m: Memcached): Warnings {
  const image = m.spec?.image;
  if (image !== undefined && !namesTagOrDigest(image)) {
    throw AdmissionDeniedError.invalid({ group: 'cache.example.com', kind: 'Memcached' }, m.metadata?.name ?? '', [
      {
        field: 'spec.image',
        message: `Invalid value: ${JSON.stringify(image)}: must name a tag (memcached:1.6) or a digest (memcached@sha256:…)`,
      },
    ]);
  }
  if (m.spec?.size === MAX_SIZE)
    return [`spec.size is at its maximum (${MAX_SIZE}): the Memcached cannot grow further`];
  return undefined;
}

// Where the API server calls them; `ctrlmetrics generate webhook` writes config/webhook/manifests.yaml from these markers.
// +kubebuilder:webhook:path=/mutate-cache-example-com-v1alpha1-memcached,mutating=true,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create;update,versions=v1alpha1,name=mmemcached-v1alpha1.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-cache-example-com-v1alpha1-memcached,mutating=false,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create;update,versions=v1alpha1,name=vmemcached-v1alpha1.kb.io,admissionReviewVersions=v1

/** Served at /mutate-cache-example-com-v1alpha1-memcached and /validate-cache-example-com-v1alpha1-memcached. */
export function newMemcachedWebhook(): Webhook<Memcached> {
  return new Webhook<Memcached>({
    for: MEMCACHED,
    defaulter: {
      default(m) {
        m.spec ??= { image: DEFAULT_IMAGE };
        if (!m.spec.image) m.spec.image = DEFAULT_IMAGE;
      },
    },
    validator: {
      validateCreate: (m) => validate(m),
      validateUpdate: (_old, m) => validate(m),
    },
  });
}
