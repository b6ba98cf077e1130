/**
 * Kubeconfig exec credential plugins (`users[].user.exec`), as client-go runs them: the command with its args and
 * env, `KUBERNETES_EXEC_INFO` holding an ExecCredential (the cluster too, with `provideClusterInfo`), the answer's
 * token or client certificate used until its `expirationTimestamp`, and the plugin run again when the API server
 * answers 401 to credentials it gave. EKS (`aws eks get-token`), GKE (`gke-gcloud-auth-plugin`), AKS (`kubelogin`)
 * and OpenShift clusters reach their API through one.
 *
 * Hand-written rather than delegated to `@kubernetes/client-node`: the protocol is small, and that package brings
 * 57 MB into every operator that installs this one. A client certificate from a plugin is read once, when the
 * configuration is loaded (a client's TLS identity is fixed when it connects); tokens rotate.
 */
import { spawn } from 'node:child_process';
import { isAbsolute, join } from 'node:path';
import { KubeConfigError } from './config-types.js';
import { scalarText } from '../util/scalar-text.js';

/** The API versions of ExecCredential client-go accepts (v1alpha1 was removed in Kubernetes 1.24). */
const API_VERSIONS = new Set(['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']);

/** How long one run of a plugin may take before it is killed (client-go sets none; an operator must not hang). */
const RUN_TIMEOUT_MS = 60_000;

/** The most a plugin may print (an ExecCredential is a few KiB). */
const MAX_OUTPUT_BYTES = 1024 * 1024;

const INSTALL_HELP =
  '\n\nIt looks like you are trying to use a client-go credential plugin that is not installed.\n\n' +
  'To learn more about this feature, consult the documentation available at:\n' +
  '      https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins';

/** The credentials a plugin gave. */
export interface ExecCredentials {
  token?: string;
  /** PEM client certificate and key. */
  cert?: string;
  key?: string;
  /** When they expire (ms since the epoch); undefined: until the API server refuses them. */
  expiresAt?: number;
}

/** The cluster a plugin is told about with `provideClusterInfo` (ExecCredential's `spec.cluster`). */
export interface ExecClusterInfo {
  server: string;
  'tls-server-name'?: string;
  'insecure-skip-tls-verify'?: boolean;
  /** base64 of the PEM CA bundle, as Go encodes bytes. */
  'certificate-authority-data'?: string;
  'proxy-url'?: string;
  /** The cluster's `extensions` entry named `client.authentication.k8s.io/exec`. */
  config?: unknown;
}

/** Options of {@link ExecCredentialPlugin}, for tests. */
export interface ExecPluginOptions {
  /** The clock the expiry is compared with (default Date.now). */
  now?: () => number;
  /** Whether standard input is a terminal (default: process.stdin.isTTY). */
  stdinIsTerminal?: boolean;
}

interface ExecConfig {
  apiVersion: string;
  command: string;
  args: string[];
  env: Array<[string, string]>;
  interactiveMode: 'Never' | 'IfAvailable' | 'Always';
  provideClusterInfo: boolean;
  installHint: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads and checks a kubeconfig user's `exec` entry; relative commands with a path resolve from the kubeconfig's folder. */
function parseExec(exec: unknown, kubeconfigDir: string, where: string): ExecConfig {
  if (!isObj(exec)) throw new KubeConfigError(`${where}: exec must be a mapping`);
  const apiVersion = typeof exec.apiVersion === 'string' ? exec.apiVersion : '';
  if (!API_VERSIONS.has(apiVersion)) {
    throw new KubeConfigError(
      `${where}: exec plugin: invalid apiVersion ${JSON.stringify(apiVersion)} (use client.authentication.k8s.io/v1 or v1beta1)`,
    );
  }
  const command = typeof exec.command === 'string' ? exec.command : '';
  if (!command) throw new KubeConfigError(`${where}: exec plugin: command must be specified`);
  const args = exec.args === undefined || exec.args === null ? [] : exec.args;
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string'))
    throw new KubeConfigError(`${where}: exec plugin: args must be a list of strings`);
  const envList = exec.env === undefined || exec.env === null ? [] : exec.env;
  if (!Array.isArray(envList)) throw new KubeConfigError(`${where}: exec plugin: env must be a list of {name, value}`);
  const env: Array<[string, string]> = envList.map((e, i) => {
    if (!isObj(e) || typeof e.name !== 'string' || !e.name || typeof e.value !== 'string') {
      throw new KubeConfigError(`${where}: exec plugin: env[${i}] must have a name and a string value`);
    }
    return [e.name, e.value];
  });
  // v1 requires the mode; v1beta1 defaults to IfAvailable (as client-go's defaulting)
  let mode = exec.interactiveMode;
  if (mode === undefined || mode === '') {
    if (apiVersion === 'client.authentication.k8s.io/v1') {
      throw new KubeConfigError(
        `${where}: exec plugin: interactiveMode must be specified for client.authentication.k8s.io/v1 (Never, IfAvailable or Always)`,
      );
    }
    mode = 'IfAvailable';
  }
  if (mode !== 'Never' && mode !== 'IfAvailable' && mode !== 'Always') {
    throw new KubeConfigError(
      `${where}: exec plugin: unknown interactiveMode ${JSON.stringify(mode)} (Never, IfAvailable or Always)`,
    );
  }
  // a bare name is looked up on PATH; a path is relative to the kubeconfig, as kubectl resolves it
  const resolved = command.includes('/') && !isAbsolute(command) ? join(kubeconfigDir, command) : command;
  return {
    apiVersion,
    command: resolved,
    args: args,
    env,
    interactiveMode: mode,
    provideClusterInfo: exec.provideClusterInfo === true,
    installHint: typeof exec.installHint === 'string' ? exec.installHint : '',
  };
}

/** The failure of one run, as client-go words it. */
interface RunFailure {
  notFound?: boolean;
  exitCode?: number | null;
  signal?: string | null;
  message: string;
}

/**
 * One kubeconfig user's exec plugin: runs it when credentials are first needed, again once they expire, and again
 * after the API server refused them; one run at a time, shared by the callers that wait for it.
 */
export class ExecCredentialPlugin {
  private readonly cfg: ExecConfig;
  private readonly now: () => number;
  private readonly stdinIsTerminal: boolean;
  private cached: ExecCredentials | undefined;
  private running: Promise<ExecCredentials> | undefined;
  private installHintShown = false;

  constructor(
    exec: unknown,
    private readonly cluster: ExecClusterInfo,
    kubeconfigDir: string,
    where: string,
    opts: ExecPluginOptions = {},
  ) {
    this.cfg = parseExec(exec, kubeconfigDir, where);
    this.now = opts.now ?? Date.now;
    this.stdinIsTerminal = opts.stdinIsTerminal ?? !!process.stdin.isTTY;
  }

  /** The current credentials: cached until they expire, else from a new run. */
  credentials(): Promise<ExecCredentials> {
    const c = this.cached;
    if (c && (c.expiresAt === undefined || this.now() < c.expiresAt)) return Promise.resolve(c);
    return this.refresh();
  }

  /**
   * The API server refused `used` (401): run the plugin again, unless the credentials were renewed meanwhile
   * (client-go's maybeRefreshCreds).
   */
  refused(used: ExecCredentials | undefined): Promise<ExecCredentials> {
    if (this.cached && used !== this.cached) return Promise.resolve(this.cached);
    this.cached = undefined;
    return this.refresh();
  }

  /** The `Authorization` header of the current credentials (none for a certificate-only plugin). */
  async headers(): Promise<Record<string, string>> {
    const c = await this.credentials();
    return c.token ? { Authorization: `Bearer ${c.token}` } : {};
  }

  private refresh(): Promise<ExecCredentials> {
    this.running ??= this.run().then(
      (c) => {
        this.running = undefined;
        this.cached = c;
        return c;
      },
      (err: unknown) => {
        this.running = undefined;
        throw err;
      },
    );
    return this.running;
  }

  private interactive(): boolean {
    const mode = this.cfg.interactiveMode;
    if (mode === 'Never') return false;
    if (mode === 'Always' && !this.stdinIsTerminal) {
      throw new Error('exec plugin cannot support interactive mode: standard input is not a terminal');
    }
    return this.stdinIsTerminal;
  }

  private async run(): Promise<ExecCredentials> {
    const interactive = this.interactive();
    const info = {
      apiVersion: this.cfg.apiVersion,
      kind: 'ExecCredential',
      spec: { interactive, ...(this.cfg.provideClusterInfo ? { cluster: this.cluster } : {}) },
    };
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of this.cfg.env) env[k] = v;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(info);
    const stdout = await new Promise<string>((resolve, reject) => {
      // stdin only when interactive; the plugin's own messages (a login prompt, what to run) reach the user on
      // stderr, as with kubectl; its answer is read from stdout
      const child = spawn(this.cfg.command, this.cfg.args, {
        env,
        stdio: [interactive ? 'inherit' : 'ignore', 'pipe', 'inherit'],
        windowsHide: true,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let failure: RunFailure | undefined;
      const timer = setTimeout(() => {
        failure = { signal: 'SIGKILL', message: `did not finish within ${RUN_TIMEOUT_MS / 1000} s` };
        child.kill('SIGKILL');
      }, RUN_TIMEOUT_MS);
      child.stdout.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_OUTPUT_BYTES) {
          failure ??= { signal: 'SIGKILL', message: `printed more than ${MAX_OUTPUT_BYTES} bytes` };
          child.kill('SIGKILL');
        } else chunks.push(c);
      });
      child.on('error', (err: NodeJS.ErrnoException) => {
        // the command could not be started (no 'close' may follow)
        clearTimeout(timer);
        reject(
          this.runError(
            failure ?? (err.code === 'ENOENT' ? { notFound: true, message: '' } : { message: err.message }),
          ),
        );
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (failure) return reject(this.runError(failure));
        if (code !== 0)
          return reject(
            this.runError(code === null ? { signal, message: 'was killed' } : { exitCode: code, message: '' }),
          );
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
    });
    return this.decode(stdout);
  }

  private runError(f: RunFailure): Error {
    const cmd = this.cfg.command;
    if (f.notFound) {
      // the long help once per plugin, as client-go rate-limits it
      let text = `exec: executable ${cmd} not found`;
      if (!this.installHintShown) {
        this.installHintShown = true;
        text += INSTALL_HELP + (this.cfg.installHint ? `\n\n${this.cfg.installHint}` : '');
      }
      return new Error(text);
    }
    if (f.exitCode !== undefined) return new Error(`exec: executable ${cmd} failed with exit code ${f.exitCode}`);
    if (f.signal)
      return new Error(
        `exec: executable ${cmd} ${f.message.startsWith('was') ? f.message : `was stopped: it ${f.message}`}`,
      );
    return new Error(`exec: ${f.message}`);
  }

  private decode(stdout: string): ExecCredentials {
    let out: unknown;
    try {
      out = JSON.parse(stdout);
    } catch {
      // neither the parser's message nor the error: both quote the output, which may hold the credential
      throw new Error(
        `decoding stdout: the plugin did not print an ExecCredential as JSON (${Buffer.byteLength(stdout)} bytes)`,
      );
    }
    if (!isObj(out) || out.kind !== 'ExecCredential')
      throw new Error('decoding stdout: the plugin did not print an ExecCredential');
    if (out.apiVersion !== this.cfg.apiVersion) {
      throw new Error(
        `exec plugin is configured to use API version ${this.cfg.apiVersion}, plugin returned version ${scalarText(out.apiVersion)}`,
      );
    }
    const status = out.status;
    if (!isObj(status)) throw new Error("exec plugin didn't return a status field");
    const token = typeof status.token === 'string' ? status.token : '';
    const cert = typeof status.clientCertificateData === 'string' ? status.clientCertificateData : '';
    const key = typeof status.clientKeyData === 'string' ? status.clientKeyData : '';
    if (!token && !cert && !key) throw new Error("exec plugin didn't return a token or a cert/key pair");
    if (!cert !== !key) throw new Error('exec plugin returned only certificate or key, not both');
    const creds: ExecCredentials = {};
    if (token) creds.token = token;
    if (cert) {
      creds.cert = cert;
      creds.key = key;
    }
    if (status.expirationTimestamp !== undefined && status.expirationTimestamp !== null) {
      const at = typeof status.expirationTimestamp === 'string' ? Date.parse(status.expirationTimestamp) : NaN;
      if (Number.isNaN(at))
        throw new Error(
          `exec plugin returned an expirationTimestamp that is not an RFC 3339 time: ${JSON.stringify(status.expirationTimestamp)}`,
        );
      creds.expiresAt = at;
    }
    return creds;
  }
}
