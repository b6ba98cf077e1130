// The write-ahead log on real files: appended lines are what a restart replays; the changes of one turn of the
// loop share one fdatasync; a failed fdatasync (here: the log is /dev/null, which refuses it with EINVAL) rejects
// the waiting writes, refuses every later one, and closing then reports that changes may be lost.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageError, WriteAheadLog } from '../../packages/envtest/src/wal.js';
import type { StoreEvent } from '../../packages/envtest/src/store.js';

const event = (rv: number, name: string, type: StoreEvent['type'] = 'ADDED'): StoreEvent => ({
  rv,
  type,
  key: 'configmaps',
  object: { metadata: { name, namespace: 'default', resourceVersion: String(rv) } },
});

describe('write-ahead log', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'wal-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('appends one JSON line per change and reports them durable after one shared fdatasync', async () => {
    const durable: number[] = [];
    const path = join(dir, 'state.1.log');
    const wal = new WriteAheadLog(path, { onDurable: (rv) => durable.push(rv) });
    for (let rv = 1; rv <= 50; rv++) wal.append(event(rv, `c${rv}`));
    wal.append(event(51, 'c1', 'DELETED'));
    await wal.durable();
    assert.deepEqual(durable, [51], 'the 51 changes of one turn of the loop shared one fdatasync');
    const lines = readFileSync(path, 'utf8').split('\n');
    assert.equal(lines.pop(), '', 'every record ends with a newline');
    assert.equal(lines.length, 51);
    assert.deepEqual(JSON.parse(lines[0]), {
      rv: 1,
      key: 'configmaps',
      object: { metadata: { name: 'c1', namespace: 'default', resourceVersion: '1' } },
    });
    assert.equal(JSON.parse(lines[50]).deleted, true);
    wal.close();
    assert.throws(() => wal.append(event(52, 'late')), /the authority is stopping; the change was not stored/);
  });

  it('a failed fdatasync rejects the waiting writes, refuses later ones and makes close report possible loss', async () => {
    const wal = new WriteAheadLog('/dev/null', { onDurable: () => assert.fail('nothing is durable') });
    wal.append(event(1, 'a'));
    await assert.rejects(
      wal.durable(),
      (err: Error) => err instanceof StorageError && /\/dev\/null could not be synced: EINVAL/.test(err.message),
    );
    assert.ok(wal.failed);
    assert.throws(() => wal.append(event(2, 'b')), /failed earlier \(EINVAL.*\); restart the authority/);
    assert.throws(() => wal.close(), /changes after resourceVersion 0 may be lost/);
  });
});
