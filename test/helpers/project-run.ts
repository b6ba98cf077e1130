/** Running a generated project's npm scripts from a test: a failure shows the output; node --test's summary read. */
import assert from 'node:assert/strict';
import type { run } from './process.js';

/** Awaits a command and fails with its exit code and the end of its output when it did not succeed. */
export async function must(what: string, p: ReturnType<typeof run>): ReturnType<typeof run> {
  const r = await p;
  assert.equal(
    r.code,
    0,
    `${what} failed (exit ${r.code}${r.timedOut ? ', timed out' : ''}):\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`,
  );
  return r;
}

/** The environment of a user's shell: without this runner's NODE_TEST_CONTEXT, which turns a nested `node --test` into a reporter to this one. */
export const userEnv: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT' && k !== 'CTRLMETRICS_TEST'),
);

/** What node --test's summary says (TAP, Node 20's default without a terminal, or spec, Node 24's). */
export function testSummary(stdout: string): Record<string, number> {
  return Object.fromEntries(
    [...stdout.matchAll(/^(?:#|\u2139) (tests|pass|fail|skipped|todo|cancelled) (\d+)$/gm)].map((m) => [
      m[1],
      Number(m[2]),
    ]),
  );
}
