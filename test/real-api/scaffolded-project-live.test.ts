/**
 * A project made by `init`, `create api` and `create webhook` on a real cluster, as its user runs it there:
 * `USE_EXISTING_CLUSTER=true npm test` and `ctrlmetrics dev` (test/e2e/project-on-cluster.suite.ts, which also runs
 * on the authority in the create-api e2e test). The project's name and domain carry the run's id, so its CRDs,
 * webhook configurations and roles are this run's own and go with the run. Both need an API server that reaches a
 * webhook server on this machine's 127.0.0.1: on one that does not (a cluster in containers or elsewhere), they skip
 * and say so. Needs the npm registry (the project's dependencies) and `npm run build` done first.
 */
import { after, before, describe } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_ID, startRealKube, webhooksUnreachable, type RealKube } from '../helpers/real-kube.js';
import { projectOnClusterTests, scaffoldCrewProject, type CrewProject } from '../e2e/project-on-cluster.suite.js';

const WEBHOOK_SKIP = await webhooksUnreachable();
let kube: RealKube | undefined;
const work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-real-project-'));
const project: CrewProject = { dir: join(work, 'crew'), name: `crew-${RUN_ID}`, domain: `${RUN_ID}.example.org` };

describe('a scaffolded project on a real cluster', { skip: WEBHOOK_SKIP, timeout: 1_200_000 }, () => {
  before(async () => {
    kube = await startRealKube();
    await scaffoldCrewProject(project);
  });
  after(async () => {
    await kube?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  projectOnClusterTests({
    project: () => project,
    tests: 9,
    start: async () => ({
      url: kube!.url,
      kubeconfig: kube!.kubeconfig,
      admin: kube!.admin,
      stop: async () => undefined,
    }),
    // a cluster others use too: only this run's names are compared before and after
    owned: (name) => name.includes(RUN_ID),
  });
});
