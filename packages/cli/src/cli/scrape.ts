/**
 * `ctrlmetrics scrape URL`: the polling client of a secure metrics endpoint. Plain mode prints the exposition
 * (filtered by `--match`); `--watch` is a live per-controller view that rides out restarts. Every failure is explained
 * (401, 403, 503, 500, TLS, connection), transient ones retried with backoff (bounded, except under `--watch`); Ctrl-C
 * exits cleanly.
 */
import type { Command } from 'commander';
import { filterExposition } from '../ops/exposition.js';
import { parseDuration } from '../ops/output.js';
import {
  DEFAULT_RETRY,
  ScrapeFailure,
  abortableSleep,
  resolveTarget,
  scrapeOnce,
  scrapeWithRetry,
  type ScrapeTarget,
} from '../ops/scrape.js';
import { WatchHistory, renderLines, renderScreen, watchPoint } from '../ops/scrape-watch.js';
import { TerminalScreen } from './terminal-screen.js';
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

export function register(program: Command): void {
  program
    .command('scrape')
    .description(
      'Scrape a secure metrics endpoint with a bearer token, explaining 401/403/500/TLS failures; --watch shows a live per-controller table',
    )
    .argument('<url>', 'metrics URL, e.g. https://127.0.0.1:8443/metrics')
    .option('--token <token>', 'bearer token')
    .option(
      '--token-file <file>',
      'file holding the bearer token, re-read on every scrape (default in a pod: the service account token)',
    )
    .option('--insecure', 'do not verify the server certificate (testing only)')
    .option('--cacert <file>', 'CA certificate that signed the server certificate')
    .option('--interval <duration>', 'time between scrapes', '5s')
    .option('--count <n>', 'number of scrapes (default: 1, or until Ctrl-C with --watch)')
    .option('--match <regex>', 'print only metrics whose name matches')
    .option(
      '--watch',
      'a live view per controller: reconciles/s, error ratio, p50/p90 reconcile latency, queue depth, the last minute as a sparkline; keeps retrying across restarts until Ctrl-C (one line per controller per scrape when not a terminal)',
    )
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
    if (!Number.isInteger(count) || count < 1)
      throw new UsageError(`--count must be a positive integer, got ${JSON.stringify(flags.count)}`);
  } else if (!flags.watch) count = 1;
  let match: RegExp | undefined;
  if (flags.match !== undefined) {
    try {
      match = new RegExp(flags.match);
    } catch (err) {
      throw new UsageError(`--match: invalid regular expression: ${(err as Error).message}`, { cause: err });
    }
  }
  const target = resolveTarget({
    url,
    token: flags.token,
    tokenFile: flags.tokenFile,
    insecure: flags.insecure,
    cacert: flags.cacert,
    timeoutMs,
  });

  const abort = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (abort.signal.aborted) process.exit(sig === 'SIGINT' ? 130 : 143);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    if (flags.watch) await watch(target, { intervalMs, count, tty: !!process.stdout.isTTY }, abort.signal);
    else await scrapeLoop(target, { intervalMs, count: count!, match }, abort.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Plain scrapes: the exposition (or the lines `--match` keeps), `count` times. */
async function scrapeLoop(
  target: ScrapeTarget,
  o: { intervalMs: number; count: number; match?: RegExp },
  signal: AbortSignal,
): Promise<void> {
  const retry = {
    ...DEFAULT_RETRY,
    onRetry: (f: ScrapeFailure, attempt: number, waitMs: number) =>
      process.stderr.write(
        `retrying in ${(waitMs / 1000).toFixed(1)}s (attempt ${attempt + 1}/${DEFAULT_RETRY.attempts}): ${f.message}\n`,
      ),
  };
  for (let n = 1; n <= o.count; n++) {
    if (signal.aborted) return;
    let res;
    try {
      res = await scrapeWithRetry(target, retry, signal);
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ScrapeFailure) throw new CliError(err.message, 1, { cause: err });
      throw err;
    }
    process.stdout.write(o.match ? filterExposition(res.body, o.match) : res.body);
    if (n < o.count) await abortableSleep(o.intervalMs, signal);
  }
}

/** The watch's wait after a failed scrape: 0.5 s doubling, up to the interval or 5 s, whichever is longer. */
function retryDelay(failures: number, intervalMs: number): number {
  return Math.min(500 * 2 ** Math.min(failures - 1, 10), Math.max(intervalMs, 5000));
}

function clock(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)}Z`;
}

/**
 * `--watch`: scrapes every interval until Ctrl-C (or `count` scrapes). Retryable failures (the manager restarting,
 * a rollout, a 5xx) are retried with backoff for as long as it takes, the last table kept on screen; a failure that
 * retrying cannot fix (401, 403, TLS) ends the watch with its explanation.
 */
async function watch(
  target: ScrapeTarget,
  o: { intervalMs: number; count?: number; tty: boolean },
  signal: AbortSignal,
): Promise<void> {
  const history = new WatchHistory();
  const screen = o.tty ? new TerminalScreen(process.stdout) : undefined;
  let scrapes = 0;
  let failures = 0;
  let downSince: number | undefined;
  let lastError = '';
  const draw = () =>
    screen?.draw(
      renderScreen(history, {
        url: target.url.href,
        intervalMs: o.intervalMs,
        columns: screen.columns,
        rows: screen.rows - 1,
        staleSince: downSince,
      }),
    );
  screen?.onResize(draw);
  screen?.enter();
  draw();
  try {
    while (!signal.aborted) {
      screen?.status(() => 'scraping…');
      let wait: number;
      try {
        const res = await scrapeOnce(target, signal);
        failures = 0;
        downSince = undefined;
        scrapes++;
        const at = Date.now();
        const stats = history.add(watchPoint(res.body, at));
        if (screen) draw();
        else process.stdout.write(renderLines(at, stats).join('\n') + '\n');
        if (o.count !== undefined && scrapes >= o.count) return;
        wait = o.intervalMs;
      } catch (err) {
        if (signal.aborted) return;
        if (!(err instanceof ScrapeFailure)) throw err;
        if (!err.retryable) throw new CliError(err.message, 1, { cause: err });
        failures++;
        lastError = err.message;
        if (downSince === undefined) {
          downSince = Date.now();
          draw();
        }
        wait = retryDelay(failures, o.intervalMs);
        if (!screen)
          process.stderr.write(
            `${clock(Date.now())} not answering (attempt ${failures}): ${lastError}; retrying in ${(wait / 1000).toFixed(1)}s\n`,
          );
      }
      const until = Date.now() + wait;
      const left = () => `${Math.max(0, Math.ceil((until - Date.now()) / 1000))}s`;
      screen?.status(() =>
        downSince === undefined
          ? `next scrape in ${left()} · Ctrl-C to stop`
          : // what fits first: the reason, often long, is cut on a narrow terminal
            `not answering since ${clock(downSince)} · attempt ${failures}, next in ${left()} · Ctrl-C to stop · ${lastError}`,
      );
      await abortableSleep(wait, signal);
    }
  } finally {
    // the last screen stays in the terminal's scrollback once the view closes
    screen?.leave(
      renderScreen(history, {
        url: target.url.href,
        intervalMs: o.intervalMs,
        columns: screen.columns,
        rows: Number.MAX_SAFE_INTEGER,
        staleSince: downSince,
      }),
    );
  }
}
