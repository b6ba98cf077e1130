/**
 * Name escaping: prometheus/common's `EscapeName` examples (../shared/reference/client-golang-exposition.md
 * §6) and quoting under `allow-utf-8`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  escapeName,
  isLegacyName,
  quoteName,
  sentName,
  writtenName,
} from '../../packages/ctrlmetrics/src/metrics/names.js';

test('legacy names: written bare under every scheme but dots, which escapes underscores', () => {
  assert.ok(isLegacyName('controller_runtime_reconcile_total'));
  assert.ok(isLegacyName('diff:ratio:gauge'));
  assert.ok(!isLegacyName('1a'));
  assert.ok(!isLegacyName('my.metric'));
  assert.equal(escapeName('a_b', 'underscores'), 'a_b');
  assert.equal(escapeName('a_b', 'values'), 'a_b');
  assert.equal(escapeName('a_b', 'dots'), 'a__b');
  for (const s of ['allow-utf-8', 'underscores', 'dots', 'values'] as const)
    assert.equal(writtenName(sentName('a_b', s)), 'a_b');
});

test('underscores: each rune that is not a legacy rune becomes one _', () => {
  assert.equal(escapeName('my.metric', 'underscores'), 'my_metric');
  assert.equal(escapeName('métrique', 'underscores'), 'm_trique');
  assert.equal(escapeName('1a', 'underscores'), '_a');
  assert.equal(escapeName('a😀b', 'underscores'), 'a_b');
});

test('dots: _ doubled, . spelled out, other runes __', () => {
  assert.equal(escapeName('a.b_c', 'dots'), 'a_dot_b__c');
  assert.equal(escapeName('é.x', 'dots'), '___dot_x');
});

test('values: U__ and hex code points', () => {
  assert.equal(escapeName('my.metric', 'values'), 'U__my_2e_metric');
  assert.equal(escapeName('a😀', 'values'), 'U__a_1f600_');
  assert.equal(escapeName('1a', 'values'), 'U___31_a');
  assert.equal(escapeName('a_.b', 'values'), 'U__a___2e_b');
});

test('allow-utf-8: quoted, with \\, newline and " escaped', () => {
  assert.equal(quoteName('my.metric'), '"my.metric"');
  assert.equal(quoteName('say "hi"\\\n'), '"say \\"hi\\"\\\\\\n"');
  assert.equal(writtenName(sentName('my.metric', 'allow-utf-8')), '"my.metric"');
  assert.equal(writtenName(sentName('my.metric', 'underscores')), 'my_metric');
});
