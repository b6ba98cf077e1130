/**
 * fast-check parameters every property test takes from the environment, so a failure seen in CI can be replayed
 * and a deeper search can be run locally without editing a test:
 *
 * - `FC_SEED` and `FC_PATH`: the `seed` and `path` fast-check printed with the failure
 *   (`Property failed after N tests { seed: -1869868216, path: "2:0:0:2", endOnFailure: true }`).
 *   Give them together with `--test-name-pattern` so that only the failed property replays them:
 *   `FC_SEED=-1869868216 FC_PATH=2:0:0:2 node --import tsx --test --test-name-pattern='exactly one' test/reliability/wire-properties.test.ts`
 * - `FC_RUNS`: how many cases each property draws instead of its default (e.g. `FC_RUNS=5000`).
 *
 * Without them each run draws a new seed, as fast-check does by default.
 */
import type { Parameters } from 'fast-check';

function envInteger(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name}=${raw}: expected an integer`);
  return n;
}

/** `fc.assert` parameters: `defaultRuns` cases unless `FC_RUNS` says otherwise; `FC_SEED`/`FC_PATH` replay a failure. */
export function propertyParams<T = unknown>(defaultRuns: number): Parameters<T> {
  const numRuns = envInteger('FC_RUNS') ?? defaultRuns;
  if (numRuns < 1) throw new Error(`FC_RUNS=${numRuns}: expected at least 1`);
  const seed = envInteger('FC_SEED');
  const path = process.env['FC_PATH'] || undefined;
  if (path !== undefined && seed === undefined)
    throw new Error('FC_PATH replays a failure only together with its FC_SEED');
  return {
    numRuns,
    ...(seed !== undefined ? { seed } : {}),
    ...(path !== undefined ? { path, endOnFailure: true } : {}),
  };
}
