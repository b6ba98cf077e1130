/**
 * The recorded kubectl cases (fixtures/cases.sh, answers recorded from kube-apiserver v1.25: fixtures/K*.out) and
 * the documented ones (documented/), run against an API server the way the recording ran them: each case's
 * commands in bash with fixtures/prelude.sh's helpers, output normalised by fixtures/normalize.py. Used by
 * fidelity.test.ts (the authority against the recorded answers) and test/real-api/fidelity-live.test.ts (the
 * authority against a real kube-apiserver, live).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const FIXTURES = join(import.meta.dirname, 'fixtures');
/** Cases with the documented 1.32 behaviour as their expected answer (no recorded one exists), run after the recorded. */
export const DOCUMENTED = join(import.meta.dirname, 'documented');
/** The namespace the recording used (its outputs name it). */
export const NS = 'kd4';
/** The server address the recording's outputs show (a server's own address is replaced by it). */
const RECORDED_SERVER = 'https://127.0.0.1:6443';

/**
 * Cases whose answer differs from the recorded one, and why. Version differences are kube-apiserver 1.25 (recorded)
 * against the 1.32 the authority emulates.
 */
export const KNOWN_DIFFERENCES: Record<string, string> = {
  K09: 'version: 1.32 tokens carry a jti claim',
  K13: 'version: 1.32 tokens carry a jti claim',
  K10: 'version: 1.32 TokenReview adds the authentication.kubernetes.io/credential-id extra',
  K11: 'version: 1.32 TokenReview adds the authentication.kubernetes.io/credential-id extra',
  K14: 'version: 1.32 TokenReview adds the authentication.kubernetes.io/credential-id extra',
  K18: "the JWT library's own error text (square/go-jose in 1.25) is not reproduced",
  K19: 'the deleted service account is named in another wording; which one 1.32 writes is not verified',
  K30: "kubectl's client-side validation reads the CRD's schema: the authority's ServiceMonitor CRD has a reduced schema (no required fields, no enums)",
  K72: 'the bundled ServiceMonitor schema keeps unknown fields under spec (x-kubernetes-preserve-unknown-fields): it does not list every field of every upstream version, and pruning one a user sets would lose it',
  K58: 'the authority serves no /metrics of its own',
  K67: 'version: the 1.32 bootstrap policy adds selfsubjectreviews and the trailing-slash discovery URLs',
  K81: 'kube-apiserver caches a successful token authentication for 10 s; the authority checks the Secret at once',
  K82: 'kube-apiserver caches a successful token authentication for 10 s; the authority checks the bound Secret at once',
};

/** Cases that act on a schedule within a bounded watch (re-run once when they miss). */
export const TIMED = new Set(['K46', 'K47']);

export interface Case {
  id: string;
  title: string;
  commands: string;
}

export function parseCases(text: string): Case[] {
  const out: Case[] = [];
  for (const line of text.split('\n')) {
    const m = /^c ([KD]\d+) "((?:[^"\\]|\\.)*)" '(.*)'$/.exec(line);
    if (m) out.push({ id: m[1], title: m[2], commands: m[3] });
  }
  return out;
}

export async function recordedCases(): Promise<Case[]> {
  return parseCases(await readFile(join(FIXTURES, 'cases.sh'), 'utf8'));
}

export async function documentedCases(): Promise<Case[]> {
  return parseCases(await readFile(join(DOCUMENTED, 'cases.sh'), 'utf8'));
}

/** The recorded (or documented) normalised answer of a case. */
export function expectedAnswer(c: Case): Promise<string> {
  return readFile(join(c.id.startsWith('D') ? DOCUMENTED : FIXTURES, `${c.id}.out`), 'utf8');
}

export function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<{ out: string; code: number }> {
  return new Promise((resolve) => {
    const child = execFile(
      cmd,
      args,
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 16 << 20 },
      (err, stdout) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ out: stdout, code });
      },
    );
    child.stdin!.on('error', () => {}); // an early exit closes the pipe: the exit status tells
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

/** An API server the cases run against. */
export interface CaseTarget {
  /** Its URL (replaced by the recording's address in the outputs). */
  url: string;
  /** A cluster-admin kubeconfig. */
  kubeconfig: string;
  /** Its CA, PEM. */
  caPem: string;
  /** Its service-account signing key file (the expired-token case re-signs a token with it). */
  saKeyFile: string;
}

/** Runs cases in order in a scratch directory `dir` (made ready here) against one server. */
export class CaseRunner {
  private env: NodeJS.ProcessEnv = {};

  constructor(
    private readonly target: CaseTarget,
    private readonly dir: string,
  ) {}

  async prepare(): Promise<void> {
    // the cases run in `dir` with the recording's relative scratch directory, which the normaliser knows by its shape
    await mkdir(join(this.dir, 'run-fidelity', 'auth'), { recursive: true });
    for (const f of ['prelude.sh', 'jwt.cjs']) await copyFile(join(FIXTURES, f), join(this.dir, f));
    for (const f of ['widget-crd.yaml', 'gadget-crd.yaml']) await copyFile(join(DOCUMENTED, f), join(this.dir, f));
    const ca = join(this.dir, 'ca.crt');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(ca, this.target.caPem);
    this.env = {
      ...process.env,
      KC: this.target.kubeconfig,
      SERVER: this.target.url,
      CA: ca,
      D: 'run-fidelity/auth',
      NS,
      SAKEY: this.target.saKeyFile,
      KUBECONFIG: '',
    };
  }

  /** Runs one case's commands with the helpers and returns its output as normalised, `[rc=N]` appended. */
  async run(c: Case): Promise<string> {
    const script = `source ./prelude.sh\n${c.commands}\n`;
    const r = await run('bash', ['-c', `{ ${script} } 2>&1`], { cwd: this.dir, env: this.env, timeoutMs: 60_000 });
    const raw = (r.out + `[rc=${r.code}]`)
      .split(this.target.url)
      .join(RECORDED_SERVER)
      // the discovery document's jwks_uri names the address the API server advertises, which behind a proxy or load
      // balancer (or a control plane reached through a forwarded port) is not the URL the tests reach it at: its path
      // is what the cases compare
      .replace(/https:\/\/[^\s'"/]+\/openid\/v1\/jwks/g, `${RECORDED_SERVER}/openid/v1/jwks`);
    return (await run('python3', [join(FIXTURES, 'normalize.py'), NS], { input: raw })).out;
  }
}
