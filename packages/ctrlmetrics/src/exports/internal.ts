/**
 * What `@ctrlmetrics/envtest` and `@ctrlmetrics/cli` use of the runtime beyond its public API: the HTTP server core,
 * the kubeconfig loader, the table of built-in kinds and a few helpers. Not a public API — those two packages pin
 * this package's exact version, and an operator should import the public subpaths instead: a release may change
 * anything here.
 *
 * @packageDocumentation
 */
export { collectionPath } from '../controller/handlers.js';
export { HttpServer, ListenError } from '../httpserver/index.js';
export type { ServerLimits, ServerRequest, ServerResponseOf } from '../httpserver/index.js';
export { BUILTIN_API_VERSION, BUILTIN_GROUPS, BUILTIN_RESOURCES } from '../kube/builtin-api.js';
export type { BuiltinResource } from '../kube/builtin-api.js';
export { kubeconfigFileFromEnv } from '../kube/config.js';
export { sameQuantity } from '../kube/equality.js';
export { isDisabled, parseBindAddress } from '../util/bind-address.js';
// the errors' base class without the root entry, which loads the manager, the controllers and the metrics
export { CtrlmetricsError, causeChain } from '../util/errors.js';
export type { CtrlmetricsErrorOptions } from '../util/errors.js';
export { kubeTime } from '../util/kube-time.js';
export { scalarText } from '../util/scalar-text.js';
// the ControllerRing CRD and the ring's default namespaces, which `ctrlmetrics init` writes into config/sharding
export { controllerRingCrd } from '../sharding/controllerring.js';
export { drainOrClose } from '../util/streams.js';
