/**
 * `ctrlmetrics scrape URL`: the polling client of a secure metrics endpoint. Plain mode prints the exposition
 * (filtered by `--match`); `--watch` redraws a per-controller table. Every failure is explained (401, 403, 503, 500,
 * TLS, connection), transient ones retried with bounded backoff; Ctrl-C exits cleanly.
 */
import type { Command } from 'commander';
import { filterExposition } from '../ops/exposition.js';
import { parseDuration } from '../ops/output.js';
import { DEFAULT_RETRY, ScrapeFailure, abortableSleep, resolveTarget, scrapeWithRetry, type ScrapeTarget } from '../ops/scrape.js';
import { renderWatchFrame, watchPoint, type WatchPoint } from '../ops/scrape-watch.js';
import { CliError, UsageError } from './errors.js';

interface ScrapeFlags {
  token?: string;
  tokenFile?: string;
  insecure?: boolean;
  cacert?: string;
  interval: string;
  count?: string;
  match?: string;
  watch?: boolean;
  requestTimeout: string;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function register(program: Command): void {
  program
    .command('scrape')
    .description('Scrape a secure metrics endpoint with a bearer token, explaining 401/403/500/TLS failures; --watch shows a live per-controller table')
    .argument('<url>', 'metrics URL, e.g. https://127.0.0.1:8443/metrics')
    .option('--token <token>', 'bearer token')
    .option('--token-file <file>', 'file holding the bearer token, re-read on every scrape (default in a pod: the service account token)')
    .option('--insecure', 'do not verify the server certificate (testing only)')
    .option('--cacert <file>', 'CA certificate that signed the server certificate')
    .option('--interval <duration>', 'time between scrapes', '5s')
    .option('--count <n>', 'number of scrapes (default: 1, or until Ctrl-C with --watch)')
    .option('--match <regex>', 'print only metrics whose name matches')
    .option('--watch', 'redraw a table per controller: reconciles/s, errors/s, p50/p99 reconcile latency, workqueue depth')
    .option('--request-timeout <duration>', 'deadline of each request', '10s')
    .action(async (url: string, flags: ScrapeFlags) => {
      await runScrape(url, flags);
    });
}

async function runScrape(url: string, flags: ScrapeFlags): Promise<void> {
  const intervalMs = parseDuration(flags.interval, '--interval');
  if (intervalMs < 100) throw new UsageError('--interval must be at least 100ms');
  const timeoutMs = parseDuration(flags.requestTimeout, '--request-timeout');
  let count: number | undefined;
  if (flags.count !== undefined) {
    count = Number(flags.count);
    if (!Number.isInteger(count) || count < 1) throw new UsageError(`--count must be a positive integer, got ${JSON.stringify(flags.count)}`);
  } else if (!flags.watch) count = 1;
  let match: RegExp | undefined;
  if (flags.match !== undefined) {
    try {
      match = new RegExp(flags.match);
    } catch (err) {
      throw new UsageError(`--match: invalid regular expression: ${(err as Error).message}`);
    }
  }
  const target = resolveTarget({ url, token: flags.token, tokenFile: flags.tokenFile, insecure: flags.insecure, cacert: flags.cacert, timeoutMs });

  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const tty = !!process.stdout.isTTY && !!flags.watch;
  if (tty) process.stdout.write('\x1b[?25l'); // hide the cursor while redrawing
  try {
    await loop(target, { intervalMs, count, match, watch: !!flags.watch, tty }, abort.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (tty) process.stdout.write('\x1b[?25h\n');
  }
}

async function loop(
  target: ScrapeTarget,
  o: { intervalMs: number; count?: number; match?: RegExp; watch: boolean; tty: boolean },
  signal: AbortSignal,
): Promise<void> {
  let previous: WatchPoint | undefined;
  const status = (text: string) => {
    if (o.tty) process.stdout.write(`\r\x1b[2K${text}`);
    else if (o.watch) process.stderr.write(text + '\n');
  };
  let phase = '';
  const retry = {
    ...DEFAULT_RETRY,
    onRetry: (f: ScrapeFailure, attempt: number, waitMs: number) => {
      const text = `retrying in ${(waitMs / 1000).toFixed(1)}s (attempt ${attempt + 1}/${DEFAULT_RETRY.attempts}): ${f.message}`;
      if (o.tty) phase = text; // shown beside the spinner
      else process.stderr.write(text + '\n');
    },
  };
  for (let n = 1; o.count === undefined || n <= o.count; n++) {
    if (signal.aborted) return;
    let res;
    let frame = 0;
    phase = `scraping ${target.url.href}`;
    const spin = o.tty ? setInterval(() => status(`${SPINNER[frame++ % SPINNER.length]} ${phase}`), 100) : undefined;
    try {
      res = await scrapeWithRetry(target, retry, signal);
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ScrapeFailure) throw new CliError(err.message);
      throw err;
    } finally {
      clearInterval(spin);
    }
    if (o.watch) {
      const point = watchPoint(res.body, Date.now());
      const frame = renderWatchFrame(target.url.href, point, previous, n);
      process.stdout.write(o.tty ? `\x1b[H\x1b[2J${frame}` : `${frame}\n`);
      previous = point;
    } else {
      process.stdout.write(o.match ? filterExposition(res.body, o.match) : res.body);
    }
    if (o.count !== undefined && n >= o.count) return;
    await waitWithSpinner(o.intervalMs, o.tty, status, signal);
  }
}

async function waitWithSpinner(ms: number, tty: boolean, status: (t: string) => void, signal: AbortSignal): Promise<void> {
  if (!tty) return abortableSleep(ms, signal);
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end && !signal.aborted; i++) {
    status(`${SPINNER[i % SPINNER.length]} next scrape in ${Math.ceil((end - Date.now()) / 1000)}s (Ctrl-C to stop)`);
    await abortableSleep(Math.min(100, end - Date.now()), signal);
  }
  status('');
}
