/**
 * CI's second Node major (`CTRLMETRICS_SECOND_NODE`, see .ci/run) skips the suites whose time goes to other
 * programs that do not change with Node — kubectl and kustomize processes, and the TypeScript compiler run over
 * whole scaffolded projects; the first run (Node 20) runs them all, and the second keeps every suite that exercises
 * this project's code on the other Node, each part of it at least once (the scaffold templates, `generate crd`).
 * The skip reason, or false.
 */
export const SECOND_NODE_SKIP: string | false = process.env.CTRLMETRICS_SECOND_NODE
  ? "kubectl-bound: run in CI's first Node major (see .ci/run)"
  : false;

/**
 * The same for suites whose time goes to the TypeScript compiler or ESLint over whole projects (scaffolded ones, the
 * docs' TypeScript blocks) and to rendering projects with kustomize.
 */
export const SECOND_NODE_SKIP_COMPILER: string | false = process.env.CTRLMETRICS_SECOND_NODE
  ? "tsc-, ESLint- and kustomize-bound: run in CI's first Node major (see .ci/run)"
  : false;
