/**
 * `ctrlmetrics token`: prints only a service-account token, so `TOKEN=$(ctrlmetrics token -n NS SA)` works; with
 * `-o json|yaml` the whole TokenRequest, as `kubectl create token -o`.
 */
import type { Command } from 'commander';
import { defaultNamespace, withClient, type KubeFlags } from '../ops/kube.js';
import { formatObject, parseDuration, parseOutput } from '../ops/output.js';
import { requestTokenRequest } from '../ops/token.js';
import { UsageError } from './errors.js';

interface TokenFlags extends KubeFlags {
  namespace?: string;
  duration?: string;
  audience?: string[];
  output?: string;
}

export function register(program: Command): void {
  program
    .command('token')
    .description(
      'Request a token for a service account (TokenRequest) and print only the token, like kubectl create token',
    )
    .argument('<serviceaccount>', 'service account name')
    .option(
      '-n, --namespace <ns>',
      "namespace of the service account (default: the kubeconfig context's, else default)",
    )
    .option('--duration <d>', "requested lifetime, e.g. 10m, 1h (default: the server's, usually 1h)")
    .option(
      '--audience <aud>',
      'intended audience (repeatable; default: the API server)',
      (v: string, p: string[] | undefined) => [...(p ?? []), v],
    )
    .option(
      '-o, --output <format>',
      'json or yaml: the whole TokenRequest (token and expirationTimestamp) instead of the token alone',
    )
    .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, in-cluster service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (serviceAccount: string, flags: TokenFlags) => {
      let expirationSeconds: number | undefined;
      if (flags.duration !== undefined) {
        const ms = parseDuration(flags.duration, '--duration');
        if (ms !== 0 && ms < 600_000)
          throw new UsageError("--duration must be at least 10m (the API server's minimum) or 0 for its default");
        if (ms % 1000 !== 0) throw new UsageError('--duration must be a whole number of seconds');
        expirationSeconds = ms === 0 ? undefined : ms / 1000;
      }
      const output = parseOutput(flags.output, ['json', 'yaml']);
      const res = await withClient(flags, (client) =>
        requestTokenRequest(client, {
          namespace: flags.namespace ?? defaultNamespace(flags),
          serviceAccount,
          expirationSeconds,
          audiences: flags.audience,
        }),
      );
      // -o json|yaml: the TokenRequest as the server answered it, as kubectl create token -o prints it
      process.stdout.write(
        output === 'json' || output === 'yaml' ? formatObject(res, output, '') : `${res.status!.token!}\n`,
      );
    });
}
