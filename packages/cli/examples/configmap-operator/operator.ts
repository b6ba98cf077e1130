/**
 * Wires the example operator: one manager, two controllers (`configmap`, `secret`), the secure metrics endpoint
 * (HTTPS, TokenReview + SubjectAccessReview on every scrape), health probes and optional leader election.
 */
import { Manager, filters, type ManagerOptions } from 'ctrlmetrics';
import { newConfigMapController } from './configmap-controller.js';
import { newSecretController } from './secret-controller.js';

/** Options of {@link newOperator}: a manager's options plus the namespace to watch (default: all). */
export interface OperatorOptions extends ManagerOptions {
  watchNamespace?: string;
}

/** A manager running the example operator's controllers; call `start()` on it. */
export function newOperator(opts: OperatorOptions = {}): Manager {
  const { watchNamespace, ...managerOptions } = opts;
  const mgr = new Manager({
    ...managerOptions,
    metrics: {
      // protect /metrics like kubebuilder's scaffold: with HTTPS (the default), only identities allowed to
      // `get /metrics` may scrape; --metrics-secure=false serves plain HTTP without authentication
      ...(managerOptions.metrics?.secureServing === false
        ? {}
        : { filterProvider: filters.withAuthenticationAndAuthorization }),
      ...managerOptions.metrics,
    },
    leaderElectionID: managerOptions.leaderElectionID ?? 'a1b2c3d4.ctrlmetrics.dev',
    // one namespace watched: the cache holds only it, so informers started by a read stay there too
    cache: watchNamespace ? { defaultNamespaces: [watchNamespace], ...managerOptions.cache } : managerOptions.cache,
  });
  mgr.add(newConfigMapController({ namespace: watchNamespace }));
  mgr.add(newSecretController({ namespace: watchNamespace }));
  return mgr;
}
