/** Renders the global registry (as the metrics endpoint would) and parses it with the independent parser. */
import * as metrics from '../../../packages/ctrlmetrics/src/metrics/index.js';
import { parseExposition, type Family } from './exposition.js';

/** The text exposition of the global registry. */
export async function renderRegistry(): Promise<string> {
  const snap = await metrics.registry.collect();
  const parts: Buffer[] = [];
  for await (const c of snap.chunks('text')) parts.push(c);
  return Buffer.concat(parts).toString('utf8');
}

/** The parsed families of the global registry. */
export async function scrapeRegistry(): Promise<Map<string, Family>> {
  return parseExposition(await renderRegistry());
}
