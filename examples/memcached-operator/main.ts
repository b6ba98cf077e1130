/**
 * The Memcached operator's entry point: a manager with the secure metrics endpoint on :8443 (TokenReview +
 * SubjectAccessReview), health probes on :8081, and the memcached controller.
 *
 *   kubectl apply -f examples/memcached-operator/config/crd/bases
 *   node dist/examples/memcached-operator/main.js
 *
 * The identity needs memcacheds (and their status) get/list/watch/update, deployments get/list/watch/create/update,
 * events create/patch, and the metrics auth role (tokenreviews and subjectaccessreviews create).
 */
import { Manager, filters } from 'ctrlmetrics';
import { setupMemcachedController } from './controller.js';

const mgr = new Manager({
  healthProbeBindAddress: ':8081',
  metrics: { bindAddress: ':8443', filterProvider: filters.withAuthenticationAndAuthorization },
});
setupMemcachedController(mgr);
try {
  await mgr.start(); // until SIGTERM/SIGINT
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
