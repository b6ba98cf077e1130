/** Jobs: a new Job's generated selector, and its pods' labels to match. */
import { isRecord } from '../json.js';
import type { KubeObject } from '../types.js';
import type { Strategy } from './strategy.js';

/**
 * A Job's labels for its pods and its selector, from its uid (kube 1.25's label names); a Job that asks for a manual
 * selector keeps its own.
 */
function generateSelector(job: KubeObject): void {
  const spec = job.spec;
  if (!isRecord(spec) || spec.manualSelector === true) return;
  const uid = String(job.metadata?.uid ?? '');
  const template = (spec.template = isRecord(spec.template) ? spec.template : {});
  const meta = (template.metadata = isRecord(template.metadata) ? template.metadata : {});
  meta.labels = {
    ...(isRecord(meta.labels) ? meta.labels : {}),
    'controller-uid': uid,
    'job-name': String(job.metadata?.name ?? ''),
  };
  spec.selector = { matchLabels: { 'controller-uid': uid } };
}

export const jobs: Strategy = {
  prepare(o, old) {
    if (!old) generateSelector(o);
  },
};
