/**
 * Informers (client-go's `tools/cache`, controller-runtime's `pkg/cache`): a list-and-watch of one resource kept in
 * memory, and the transforms that trim objects before they are cached.
 * @module ctrlmetrics/cache
 */
export { Informer, objectKey } from '../kube/informer.js';
export type { InformerOptions, InformerHandler, InformerHealth, InformerObject } from '../kube/informer.js';
export * as transforms from '../kube/transforms.js';
export type { IndexExtractor } from '../kube/field-index.js';
