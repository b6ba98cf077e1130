/**
 * The assignment webhook of a ring (`/webhooks/sharder/controllerring/<ring>`): kube-apiserver calls it for objects of
 * the ring's kinds that carry no shard label yet (the webhook configuration's objectSelector), on CREATE and UPDATE;
 * it answers with a JSON patch adding the label of the shard the hash ring gives. An object already labelled, one
 * of no ring kind, or a ring without an available shard is allowed untouched (it waits for the next pass of the
 * rebalancer). A primary object without a name yet (`generateName`) is refused: the name is its key.
 */
import { allowed, denied, patched, type AdmissionHandler } from '../webhook/admission.js';
import type { ShardingLabels } from '../controller/sharding.js';
import { RingMembership, objectHashKey, type ObjectMeta } from './membership.js';
import { assignments } from './metrics.js';

/** The path of a ring's webhook. */
export const webhookPath = (ring: string): string => `/webhooks/sharder/controllerring/${ring}`;

/** A JSON pointer's escaping of one path segment. */
const pointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/** The admission handler of ring `name`. */
export function assignmentHandler(name: string, membership: RingMembership, labels: ShardingLabels): AdmissionHandler {
  return (req) => {
    const view = membership.get(name);
    const meta = (req.object as { metadata?: ObjectMeta } | null | undefined)?.metadata ?? {};
    if (!view || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return allowed();
    if (meta.labels?.[labels.shard]) return allowed('already assigned');
    const role = RingMembership.roleOf(view.ring, req.resource);
    if (!role) return allowed(`not a kind of ring ${name}`);
    if (role === 'main' && !meta.name)
      return denied(
        `${req.kind.kind} objects of ring ${name} need a name: the sharder assigns them by it, and generateName gives none yet`,
      );
    const key = objectHashKey(role, req.kind.group, req.kind.kind, {
      ...meta,
      namespace: meta.namespace ?? req.namespace,
    });
    if (!key) return allowed('no controlling owner to assign by');
    const shard = view.hash.shardFor(key);
    if (!shard) return allowed(`ring ${name} has no available shard`);
    if (!req.dryRun) assignments.labels(name, req.resource.group, req.resource.resource).inc();
    return patched(
      meta.labels
        ? [{ op: 'add', path: `/metadata/labels/${pointer(labels.shard)}`, value: shard }]
        : [{ op: 'add', path: '/metadata/labels', value: { [labels.shard]: shard } }],
    );
  };
}
