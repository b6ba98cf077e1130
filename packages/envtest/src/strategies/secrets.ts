/**
 * Secrets: stringData merged into data (at decoding, as kube), immutable ones kept, `Opaque` by default, and what
 * kube's token controller does for a `kubernetes.io/service-account-token` Secret.
 */
import { immutabilityCauses, mergeStringData, secretCauses } from '../config-data.js';
import { record, type JsonObject } from '../json.js';
import { invalid } from '../status.js';
import type { KubeObject } from '../types.js';
import type { Strategy, StrategyContext } from './strategy.js';

const SA_TOKEN_SECRET = 'kubernetes.io/service-account-token';
const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';

/**
 * Records the service account's uid and fills in `token`, `ca.crt` and `namespace` (once the service account
 * exists), as kube's token controller does.
 */
function fillTokenSecret(o: KubeObject, ctx: StrategyContext): void {
  const m = (o.metadata ??= {});
  const name = m.name ?? '';
  const namespace = m.namespace ?? '';
  const saName = m.annotations?.[SA_NAME_ANNOTATION];
  if (!saName) {
    throw invalid('Secret', '', name, [
      {
        field: `metadata.annotations[${SA_NAME_ANNOTATION}]`,
        message: 'Required value',
        reason: 'FieldValueRequired',
      },
    ]);
  }
  const sa = ctx.store.get('serviceaccounts', namespace, saName);
  if (!sa || !ctx.issueLegacyToken) return;
  const uid = String(sa.metadata?.uid);
  const data: JsonObject = { ...record(o.data) };
  o.data = data;
  if (m.annotations?.[SA_UID_ANNOTATION] !== uid || !data.token) {
    m.annotations = { ...m.annotations, [SA_UID_ANNOTATION]: uid };
    data.token = Buffer.from(ctx.issueLegacyToken({ namespace, name: saName, uid, secretName: name })).toString(
      'base64',
    );
  }
  data['ca.crt'] = Buffer.from(ctx.caPem).toString('base64');
  data.namespace = Buffer.from(namespace).toString('base64');
}

export const secrets: Strategy = {
  decode: mergeStringData,
  validateUpdateFirst: (o, old) => immutabilityCauses('Secret', old, o),
  validate: (o) => secretCauses(o),
  prepare(o, old, ctx) {
    if (!o.type) o.type = old?.type ?? 'Opaque';
    mergeStringData(o);
    if (o.type === SA_TOKEN_SECRET) fillTokenSecret(o, ctx);
  },
};
