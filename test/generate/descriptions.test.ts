/**
 * controller-gen's maxDescLen: descriptions cut to a byte budget — back to a sentence end, else a word plus "...",
 * else a hard cut plus "..." — or removed with 0; through the library and the command.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { truncateDescription, truncateDescriptions } from '../../packages/cli/src/generate/descriptions.js';
import { runCli, ROOT } from '../helpers/process.js';

test('a description within the budget is unchanged', () => {
  assert.equal(truncateDescription('Short.', 6), 'Short.');
  assert.equal(truncateDescription('Short.', 100), 'Short.');
});

test('over the budget: back to the last sentence end, kept without an ellipsis', () => {
  assert.equal(truncateDescription('First sentence. Second sentence goes on', 20), 'First sentence.');
  assert.equal(truncateDescription('Is it? Yes it is, for sure', 12), 'Is it?');
});

test('no sentence end: back to the last whitespace, plus "..."', () => {
  assert.equal(truncateDescription('no terminal here at all', 12), 'no terminal...');
});

test('neither: the hard cut plus "..."', () => {
  assert.equal(truncateDescription('abcdefghij', 4), 'abcd...');
});

test('the budget is in UTF-8 bytes and a character is never split', () => {
  // "é" is two bytes: "hé" is three, so a budget of 2 keeps only "h"
  assert.equal(truncateDescription('héllo', 2), 'h...');
  assert.equal(truncateDescription('héllo', 3), 'hé...');
});

test('0 removes every description, in properties, items, additionalProperties and junctors alike', () => {
  const schema = {
    description: 'root',
    type: 'object',
    properties: {
      description: { description: 'a field named description', type: 'string' },
      list: { type: 'array', items: { description: 'item', type: 'string' } },
      map: { type: 'object', additionalProperties: { description: 'value', type: 'string' } },
      either: {
        anyOf: [{ description: 'one', type: 'integer' }, { type: 'string' }],
        'x-kubernetes-int-or-string': true,
      },
    },
  };
  assert.deepStrictEqual(truncateDescriptions(schema, 0), {
    type: 'object',
    properties: {
      description: { type: 'string' },
      list: { type: 'array', items: { type: 'string' } },
      map: { type: 'object', additionalProperties: { type: 'string' } },
      either: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
    },
  });
  assert.equal(schema.description, 'root', 'the input is left as it was');
});

test('generate crd --max-desc-len cuts the written CRD, and refuses a budget that is not a whole number', async () => {
  // under the repository, where the command's tsx and the package's types resolve
  const dir = await mkdtemp(join(ROOT, '.max-desc-len-'));
  try {
    await writeFile(
      join(dir, 'api.ts'),
      `// +groupName=example.com\n// +versionName=v1\nimport type { ObjectMeta } from '../packages/ctrlmetrics/src/index.js';\n\n/** Spec of a thing. It has two sentences. */\nexport interface ThingSpec {\n  /** The name of the thing, which is long enough to be cut */\n  name?: string;\n}\n\n/** Thing is a thing. */\nexport interface Thing {\n  apiVersion: string;\n  kind: string;\n  metadata: ObjectMeta;\n  spec?: ThingSpec;\n}\n`,
    );
    const r = await runCli(['generate', 'crd', '--paths', 'api.ts', '--output-dir', 'out', '--max-desc-len', '20'], {
      cwd: dir,
    });
    assert.equal(r.code, 0, r.stderr);
    const crd = parseYaml((await readFile(join(dir, 'out', 'example.com_things.yaml'), 'utf8')).replace(/^---\n/, ''));
    const root = crd.spec.versions[0].schema.openAPIV3Schema;
    assert.equal(root.description, 'Thing is a thing.');
    assert.equal(root.properties.spec.description, 'Spec of a thing.');
    assert.equal(root.properties.spec.properties.name.description, 'The name of the...');
    for (const bad of ['-1', 'ten', '1.5']) {
      const e = await runCli(['generate', 'crd', '--paths', 'api.ts', '--output-dir', 'out', '--max-desc-len', bad], {
        cwd: dir,
      });
      assert.equal(e.code, 1, bad);
      assert.match(e.stderr, /^error: --max-desc-len takes a whole number of bytes \(0 removes descriptions\); got "/);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
