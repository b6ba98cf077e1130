/**
 * CI's second Node major (`CTRLMETRICS_SECOND_NODE`, see .ci/run) skips the suites whose time goes to kubectl and
 * kustomize processes, which do not change with Node; the first run (Node 20) runs them all, and the second keeps
 * every suite that exercises this project's code on the other Node. The skip reason, or false.
 */
export const SECOND_NODE_SKIP: string | false = process.env.CTRLMETRICS_SECOND_NODE ? 'kubectl-bound: run in CI\'s first Node major (see .ci/run)' : false;
