/** `ctrlmetrics token`: prints only a service-account token, so `TOKEN=$(ctrlmetrics token -n NS SA)` works. */
import type { Command } from 'commander';
import { defaultNamespace, withClient, type KubeFlags } from '../ops/kube.js';
import { parseDuration } from '../ops/output.js';
import { requestServiceAccountToken } from '../ops/token.js';
import { UsageError } from './errors.js';

interface TokenFlags extends KubeFlags {
  namespace?: string;
  duration?: string;
  audience?: string[];
}

export function register(program: Command): void {
  program
    .command('token')
    .description('Request a token for a service account (TokenRequest) and print only the token, like kubectl create token')
    .argument('<serviceaccount>', 'service account name')
    .option('-n, --namespace <ns>', 'namespace of the service account (default: the kubeconfig context\'s, else default)')
    .option('--duration <d>', 'requested lifetime, e.g. 10m, 1h (default: the server\'s, usually 1h)')
    .option('--audience <aud>', 'intended audience (repeatable; default: the API server)', (v: string, p: string[] | undefined) => [...(p ?? []), v])
    .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, in-cluster service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (serviceAccount: string, flags: TokenFlags) => {
      let expirationSeconds: number | undefined;
      if (flags.duration !== undefined) {
        const ms = parseDuration(flags.duration, '--duration');
        if (ms !== 0 && ms < 600_000) throw new UsageError('--duration must be at least 10m (the API server\'s minimum) or 0 for its default');
        if (ms % 1000 !== 0) throw new UsageError('--duration must be a whole number of seconds');
        expirationSeconds = ms === 0 ? undefined : ms / 1000;
      }
      const token = await withClient(flags, (client) =>
        requestServiceAccountToken(client, { namespace: flags.namespace ?? defaultNamespace(flags), serviceAccount, expirationSeconds, audiences: flags.audience }),
      );
      process.stdout.write(token + '\n');
    });
}
