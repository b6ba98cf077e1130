/**
 * `ctrlmetrics edit` is reversible and path-independent, with the user's own edits in the files:
 *  - switching options on and then all off again gives back the user's files byte for byte (comments, blank lines,
 *    their own entries);
 *  - any sequence of switches that ends in the same options gives the same text as switching them on at once.
 * The options reached are modelled by hand: metrics-tls brings prometheus and certmanager along, and turning either
 * of those off takes metrics-tls down.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import {
  SCAFFOLD_OPTIONS,
  editProject,
  readOptionState,
  type ScaffoldOption,
} from '../../packages/cli/src/scaffold/edit.js';
import { propertyParams } from '../helpers/property.js';

const FILES = ['config/default/kustomization.yaml', 'config/prometheus/kustomization.yaml'];
let work: string;
let userBase: string;
let n = 0;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-edit-roundtrip-'));
  userBase = join(work, 'user');
  await initProject({ projectName: 'demo', dir: userBase, ctrlmetricsVersion: '^0.1.0' });
  // the user's own edits: a note, an extra resource with a comment, a label block, a blank line of their own
  const def = join(userBase, FILES[0]);
  const text = readFileSync(def, 'utf8');
  const edited = text
    .replace('namePrefix: demo-\n', 'namePrefix: demo-\n\n# team note: do not rename the prefix\n')
    .replace('- ../manager\n', '- ../manager\n# our own objects\n- extra.yaml\n')
    .replace(
      '#labels:\n#- includeSelectors: true\n#  pairs:\n#    team: platform\n',
      'labels:\n- includeSelectors: false\n  pairs:\n    team: shop\n',
    );
  assert.notEqual(edited, text);
  writeFileSync(def, edited);
  const prom = join(userBase, FILES[1]);
  writeFileSync(prom, readFileSync(prom, 'utf8') + '# scraped by the platform team\n');
});
after(() => rmSync(work, { recursive: true, force: true }));

const read = (dir: string): string[] => FILES.map((f) => readFileSync(join(dir, f), 'utf8'));

function copy(base = userBase): string {
  const dir = join(work, `p${n++}`);
  cpSync(base, dir, { recursive: true });
  return dir;
}

type Op = { enable: boolean; option: ScaffoldOption };

/** The hand-written model of which options are on after `ops`. */
function model(ops: Op[]): Set<ScaffoldOption> {
  const on = new Set<ScaffoldOption>();
  for (const { enable, option } of ops) {
    if (enable) {
      on.add(option);
      if (option === 'metrics-tls') on.add('prometheus').add('certmanager');
      if (option === 'sharding') on.add('certmanager');
    } else {
      on.delete(option);
      if (option === 'prometheus' || option === 'certmanager') on.delete('metrics-tls');
      if (option === 'certmanager') on.delete('sharding');
    }
  }
  return on;
}

const opArb = fc.record({ enable: fc.boolean(), option: fc.constantFrom(...SCAFFOLD_OPTIONS) });

test("switching options on and all off again restores the user's files byte for byte", async () => {
  const original = read(userBase);
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 8 }), async (ops) => {
      const dir = copy();
      try {
        for (const op of ops) await editProject(dir, op.enable ? { enable: [op.option] } : { disable: [op.option] });
        assert.deepEqual(
          new Set(
            Object.entries(readOptionState(dir))
              .filter(([, v]) => v)
              .map(([k]) => k),
          ),
          model(ops),
          'options on',
        );
        await editProject(dir, { disable: [...SCAFFOLD_OPTIONS] });
        assert.deepEqual(read(dir), original);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    propertyParams(40),
  );
});

test('the text depends only on the options reached, not on the way there', async () => {
  const canonical = new Map<string, string[]>();
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 8 }), async (ops) => {
      const state = [...model(ops)].sort();
      const key = state.join(',');
      if (!canonical.has(key)) {
        const direct = copy();
        await editProject(direct, { enable: state });
        canonical.set(key, read(direct));
        rmSync(direct, { recursive: true, force: true });
      }
      const dir = copy();
      try {
        for (const op of ops) await editProject(dir, op.enable ? { enable: [op.option] } : { disable: [op.option] });
        assert.deepEqual(read(dir), canonical.get(key), `ops ${JSON.stringify(ops)} → [${key}]`);
        const text = read(dir)[0];
        assert.ok(
          text.includes('# team note: do not rename the prefix') && text.includes('# our own objects\n- extra.yaml'),
          'user edits kept',
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    propertyParams(40),
  );
});

test('a kustomization with CRLF line ends keeps them: no \\r in any value, and all off again gives the bytes back', async () => {
  const crlfBase = join(work, 'user-crlf');
  cpSync(userBase, crlfBase, { recursive: true });
  for (const f of FILES) {
    const p = join(crlfBase, f);
    writeFileSync(p, readFileSync(p, 'utf8').replace(/\n/g, '\r\n'));
  }
  const original = read(crlfBase);
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 6 }), async (ops) => {
      const dir = copy(crlfBase);
      try {
        for (const op of ops) await editProject(dir, op.enable ? { enable: [op.option] } : { disable: [op.option] });
        assert.deepEqual(
          new Set(
            Object.entries(readOptionState(dir))
              .filter(([, v]) => v)
              .map(([k]) => k),
          ),
          model(ops),
          'options on',
        );
        for (const text of read(dir)) {
          assert.doesNotMatch(text, /(^|[^\r])\n/, 'every line ends with CRLF');
          assert.doesNotMatch(text, /\r(?!\n)/, 'no carriage return other than in a line end');
          assert.doesNotMatch(text, /\\r/, 'no escaped carriage return in a value');
        }
        await editProject(dir, { disable: [...SCAFFOLD_OPTIONS] });
        assert.deepEqual(read(dir), original);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    propertyParams(25),
  );
});
