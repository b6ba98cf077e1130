/** Nodes: a kubelet registers its Node with its status, which kube's node strategy keeps on create. */
import type { Strategy } from './strategy.js';

export const nodes: Strategy = { createKeepsStatus: true };
