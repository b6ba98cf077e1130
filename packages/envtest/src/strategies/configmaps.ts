/** ConfigMaps: immutable ones keep their data; keys and sizes as kube checks them. */
import { configMapCauses, immutabilityCauses } from '../config-data.js';
import type { Strategy } from './strategy.js';

export const configmaps: Strategy = {
  validateUpdateFirst: (o, old) => immutabilityCauses('ConfigMap', old, o),
  validate: (o) => configMapCauses(o),
};
