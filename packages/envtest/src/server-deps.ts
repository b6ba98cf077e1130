/** What the authority's HTTP layer is given (server.ts, handlers/): its services and its limits. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'ctrlmetrics/log';
import type { Authenticator } from './authn.js';
import type { Authorizer } from './authz.js';
import type { CustomResourceConverter } from './cr-conversion.js';
import type { ObjectService } from './objects.js';
import type { ResourceRegistry } from './resources.js';
import type { Reviews } from './reviews.js';
import type { TokenSigner } from './sa-tokens.js';
import type { WatchHub } from './watch.js';
import type { WebhookAdmission } from './webhook-admission.js';

/** Everything the HTTP layer needs. */
export interface ServerDeps {
  registry: ResourceRegistry;
  objects: ObjectService;
  reviews: Reviews;
  authn: Authenticator;
  authz: Authorizer;
  hub: WatchHub;
  signer: TokenSigner;
  /** host:port clients use (for `/api` serverAddressByClientCIDRs). */
  serverAddress: () => string;
  /** Extra non-resource handlers (openapi); return true when handled. */
  nonResource?: (path: string, req: IncomingMessage, res: ServerResponse) => boolean;
  bookmarkIntervalMs?: number;
  /** Requests (other than watches) served at once before answering 429 (kube's `--max-requests-inflight`, default 400). */
  maxRequestsInFlight?: number;
  /** Watches open at once before answering 429 (default 1000). */
  maxWatches?: number;
  /** Resolves once every change made so far is on disk (absent: in memory, nothing to wait for). */
  durable?: () => Promise<void>;
  /** Admission webhooks called on writes (absent: none). */
  webhooks?: WebhookAdmission;
  /** Converts custom resources whose CRD converts by webhook (absent: only apiVersion changes). */
  conversions?: CustomResourceConverter;
  logger: Logger;
}
