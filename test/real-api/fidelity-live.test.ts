/**
 * The live differential: the 83 recorded kubectl cases (test/authority/fidelity) replayed in the same run against
 * a real kube-apiserver v1.25.9 (a control plane of this file's own, with the ServiceMonitor CRD the authority
 * ships) and against the authority, both outputs normalised alike and compared case by case. A case that differs
 * is listed in LIVE_DIFFERENCES with its reason; the test fails when an unlisted case differs and when a listed one
 * starts to match. The real server's answers are also compared with the recording (same version): what differs
 * there is listed in RECORDING_DIFFERENCES.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { CRD_SETS } from '../../packages/envtest/src/crds.js';
import { installCrd } from '../helpers/cluster.js';
import { CaseRunner, KNOWN_DIFFERENCES, TIMED, expectedAnswer, recordedCases } from '../authority/fidelity/cases.js';
import { FRESH_KUBE_SKIP, startRealKube, type RealKube } from '../helpers/real-kube.js';

/**
 * Cases whose live answers differ between the real server (1.25) and the authority (which emulates 1.32), and why:
 * the authority's known differences from the recording, less those that came from the recording's CRD, plus what
 * kubectl 1.32 does differently against a 1.25 server.
 */
const LIVE_DIFFERENCES: Record<string, string> = {
  ...Object.fromEntries(Object.entries(KNOWN_DIFFERENCES).filter(([id]) => id !== 'K30' && id !== 'K72')),
  K70: "version: before the create, kubectl 1.32 checks whether a 1.25 server validates fields of this kind itself, for which it lists CRDs, which the service account may not (an error of kubectl's own); against 1.32 it sends the create and the server answers 403",
};

/** Cases whose live answer from the real server differs from the recording, and why. */
const RECORDING_DIFFERENCES: Record<string, string> = {
  K30: "the recording installed the upstream ServiceMonitor CRD, whose schema kubectl validated on the client; this run installs the authority's (unknown fields kept under spec), which the server validates itself, on both servers alike",
  K70: "the recording shows the server's 403; kubectl 1.32 against this 1.25 server stops earlier, at its field-validation check (see LIVE_DIFFERENCES)",
  K72: "the recording installed the upstream ServiceMonitor CRD, which prunes the unknown field; this run installs the authority's, which keeps unknown fields under spec, on both servers alike",
};

describe(
  'the authority and a real kube-apiserver answer the recorded kubectl cases alike (live)',
  { skip: FRESH_KUBE_SKIP, timeout: 900_000 },
  () => {
    // a control plane of its own: the recorded cases have fixed names and cluster-wide objects, and need an empty one
    let kube: RealKube;
    let authority: Authority;
    let tmp: string;
    const results = new Map<string, { real: string; ours: string; recorded: string }>();

    before(async () => {
      tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-fidelity-live-'));
      kube = await startRealKube({ fresh: true });
      for (const crd of CRD_SETS['prometheus-operator'].crds) await installCrd(kube.admin, crd);
      const stateDir = join(tmp, 'state');
      authority = await startAuthority({ stateDir, crds: ['prometheus-operator'] });
      await Promise.all(['real', 'authority'].map((d) => mkdir(join(tmp, d))));
      const real = new CaseRunner(
        { url: kube.url, kubeconfig: kube.kubeconfig, caPem: kube.caPem, saKeyFile: kube.saKeyFile! },
        join(tmp, 'real'),
      );
      const ours = new CaseRunner(
        {
          url: authority.url,
          kubeconfig: authority.kubeconfig,
          caPem: authority.caPem,
          saKeyFile: join(stateDir, 'sa.key'),
        },
        join(tmp, 'authority'),
      );
      await Promise.all([real.prepare(), ours.prepare()]);
      const cases = await recordedCases();
      assert.equal(cases.length, 83);
      for (const c of cases) {
        let [r, o] = await Promise.all([real.run(c), ours.run(c)]);
        // the watch cases change objects on a schedule inside a 5 s watch: on a loaded machine, one more try
        if (r.trimEnd() !== o.trimEnd() && TIMED.has(c.id)) [r, o] = await Promise.all([real.run(c), ours.run(c)]);
        results.set(c.id, { real: r, ours: o, recorded: await expectedAnswer(c) });
      }
    });

    after(async () => {
      await authority?.stop();
      await kube?.stop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    const differs = (a: string, b: string) => a.trimEnd() !== b.trimEnd();

    it('every case answers alike on both, but for the listed differences', (t) => {
      const live = [...results].filter(([, r]) => differs(r.real, r.ours)).map(([id]) => id);
      t.diagnostic(
        `${results.size - live.length} of ${results.size} cases answer alike; ${live.length} differ: ${live.join(', ')}`,
      );
      const unexpected = live.filter((id) => !(id in LIVE_DIFFERENCES));
      assert.deepEqual(
        unexpected,
        [],
        unexpected
          .map((id) => `${id}:\n--- real\n${results.get(id)!.real}\n--- authority\n${results.get(id)!.ours}`)
          .join('\n\n')
          .slice(0, 30_000),
      );
      assert.deepEqual(
        Object.keys(LIVE_DIFFERENCES).filter((id) => !live.includes(id)),
        [],
        'listed differences that now match: remove them',
      );
    });

    it('the real server answers as it did when the cases were recorded, but for the listed differences', () => {
      const drift = [...results].filter(([, r]) => differs(r.real, r.recorded)).map(([id]) => id);
      const unexpected = drift.filter((id) => !(id in RECORDING_DIFFERENCES));
      assert.deepEqual(
        unexpected,
        [],
        unexpected
          .map((id) => `${id}:\n--- recorded\n${results.get(id)!.recorded}\n--- real\n${results.get(id)!.real}`)
          .join('\n\n')
          .slice(0, 30_000),
      );
      assert.deepEqual(
        Object.keys(RECORDING_DIFFERENCES).filter((id) => !drift.includes(id)),
        [],
        'listed differences that now match: remove them',
      );
    });

    it('the differences from the recording the authority has listed are the live ones too', () => {
      // a known difference of the authority against the recording must show live as well (or be a recording artefact)
      const notLive = Object.keys(KNOWN_DIFFERENCES).filter(
        (id) => !differs(results.get(id)!.real, results.get(id)!.ours) && !(id in RECORDING_DIFFERENCES),
      );
      assert.deepEqual(notLive, []);
    });
  },
);
