/**
 * Multi-group projects (kubebuilder's `--multigroup`): `init --multigroup`, or `edit --multigroup` on a project of
 * one group, lays new kinds out by group — `src/api/<group>/<version>/`, `src/controllers/<group>/`,
 * `test/controllers/<group>-<kind>-…`, `src/webhooks/<group>/<version>/`, roles `<group>_<kind>_*_role.yaml`, controllers
 * named `<group>-<kind>` — the project type-checks, and without the layout a second group is refused with the flag
 * that allows it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { createApi } from '../../packages/cli/src/scaffold/create-api.js';
import { createWebhook } from '../../packages/cli/src/scaffold/create-webhook.js';
import { runCli } from '../helpers/process.js';
import { typeErrorsOfProject } from '../helpers/project-typecheck.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

let work: string;
before(() => {
  work = realpathSync(mkdtempSync(join(tmpdir(), 'ctrlmetrics-multigroup-')));
});
after(() => rmSync(work, { recursive: true, force: true }));

describe('multi-group projects', () => {
  test(
    'init --multigroup: each group in its folders; webhooks too; the project type-checks',
    { skip: SECOND_NODE_SKIP_COMPILER },
    async () => {
      const app = join(work, 'fleet-op');
      await initProject({
        projectName: 'fleet-op',
        domain: 'example.com',
        dir: app,
        ctrlmetricsVersion: '^0.1.0',
        multigroup: true,
      });
      assert.equal(
        (parseYaml(readFileSync(join(app, 'PROJECT'), 'utf8')) as { multigroup?: boolean }).multigroup,
        true,
      );
      await createApi({ dir: app, group: 'crew', version: 'v1', kind: 'Captain' });
      await createApi({ dir: app, group: 'ship', version: 'v1beta1', kind: 'Frigate', namespaced: false });
      await createWebhook({
        dir: app,
        group: 'ship',
        version: 'v1beta1',
        kind: 'Frigate',
        defaulting: true,
        programmaticValidation: true,
      });
      for (const f of [
        'src/api/crew/v1/captain-types.ts',
        'src/api/ship/v1beta1/frigate-types.ts',
        'src/controllers/crew/captain-controller.ts',
        'src/controllers/ship/frigate-controller.ts',
        'test/controllers/crew-captain-controller.test.ts',
        'test/controllers/ship-frigate-controller.test.ts',
        'src/webhooks/ship/v1beta1/frigate-webhook.ts',
        'test/webhooks/ship-frigate-webhook.test.ts',
        'config/rbac/ship_frigate_admin_role.yaml',
        'config/rbac/crew_captain_viewer_role.yaml',
      ]) {
        assert.ok(existsSync(join(app, f)), f);
      }
      const main = readFileSync(join(app, 'src/main.ts'), 'utf8');
      assert.match(main, /^import \{ newFrigateController \} from '\.\/controllers\/ship\/frigate-controller\.js';$/m);
      assert.match(main, /^import \{ newFrigateWebhook \} from '\.\/webhooks\/ship\/v1beta1\/frigate-webhook\.js';$/m);
      assert.match(
        readFileSync(join(app, 'src/controllers/ship/frigate-controller.ts'), 'utf8'),
        /name: 'ship-frigate',/,
      );
      // tests stay one folder deep, where the project's npm test finds them, and import the group's code
      assert.match(
        readFileSync(join(app, 'test/controllers/ship-frigate-controller.test.ts'), 'utf8'),
        /from '\.\.\/\.\.\/src\/controllers\/ship\/frigate-controller\.js';/,
      );
      const entries = (
        parseYaml(readFileSync(join(app, 'PROJECT'), 'utf8')) as { resources: Array<Record<string, unknown>> }
      ).resources;
      assert.deepEqual(
        entries.map((e) => e.path),
        ['src/api/crew/v1', 'src/api/ship/v1beta1'],
      );
      assert.deepEqual(await typeErrorsOfProject(app), []);
    },
  );

  test('a project of one group: the refusal names edit --multigroup, which switches it', async () => {
    const app = join(work, 'one-op');
    await initProject({ projectName: 'one-op', domain: 'example.com', dir: app, ctrlmetricsVersion: '^0.1.0' });
    await createApi({ dir: app, group: 'crew', version: 'v1', kind: 'Captain' });
    await assert.rejects(
      createApi({ dir: app, group: 'ship', version: 'v1', kind: 'Frigate' }),
      /multiple groups are not allowed by default, .* \(ctrlmetrics edit --multigroup switches this project to the multi-group layout\)$/,
    );
    const edited = await runCli(['edit', '--multigroup', '--dir', app]);
    assert.equal(edited.code, 0, edited.stderr);
    assert.match(edited.stdout, /^PROJECT: multigroup: true; new kinds go to src\/api\/<group>\/<version>\//);
    await createApi({ dir: app, group: 'ship', version: 'v1', kind: 'Frigate' });
    assert.ok(existsSync(join(app, 'src/api/ship/v1/frigate-types.ts')));
    assert.ok(existsSync(join(app, 'src/api/v1/captain-types.ts')), 'the kinds made before stay where they are');
    // back to one group is refused while the project's types span two
    // the CLI's next step names the group's folders
    const hook = await runCli([
      'create',
      'webhook',
      '--group',
      'ship',
      '--version',
      'v1',
      '--kind',
      'Frigate',
      '--defaulting',
      '--make=false',
      '--dir',
      app,
    ]);
    assert.equal(hook.code, 0, hook.stderr);
    assert.match(hook.stdout, /Next: implement your new Webhook in \S*src\/webhooks\/ship\/v1 and generate/);
    const back = await runCli(['edit', '--multigroup=false', '--dir', app]);
    assert.equal(back.code, 1);
    assert.equal(
      back.stderr,
      'error: the project has API types in 2 groups (crew, ship): it cannot go back to one group\n',
    );
  });
});
