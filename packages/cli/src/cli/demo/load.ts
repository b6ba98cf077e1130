/**
 * The demo's small, bounded, steady load: a fixed set of managed ConfigMaps and one managed Secret, one of them
 * updated every interval, so the controllers keep reconciling. Never creates more than {@link OBJECTS} objects.
 */
import { KubeApiError, type KubeClient } from 'ctrlmetrics/client';
import type { Logger } from 'ctrlmetrics/log';
import { applyObject } from './apply.js';

const MANAGED = { 'ctrlmetrics.dev/managed': 'true' };
/** Number of ConfigMaps the load keeps. */
export const OBJECTS = 3;

/** Runs until stopped. */
export class DemoLoad {
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  private busy = false;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  /** Creates (or resets) the objects, then starts the periodic updates. */
  async start(): Promise<void> {
    for (let i = 0; i < OBJECTS; i++) {
      await applyObject(this.client, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `demo-${i}`, namespace: this.namespace, labels: MANAGED },
        data: { greeting: `hello ${i}`, revision: '0' },
      });
    }
    await applyObject(this.client, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'demo-credentials', namespace: this.namespace, labels: MANAGED },
      type: 'Opaque',
      data: {
        username: Buffer.from('demo').toString('base64'),
        password: Buffer.from(String(Date.now())).toString('base64'),
      },
    });
    this.timer = setInterval(() => void this.step(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the updates. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async step(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    const n = ++this.tick;
    try {
      const name = `demo-${n % OBJECTS}`;
      await this.client.mergePatch(
        `/api/v1/namespaces/${this.namespace}/configmaps/${name}`,
        { data: { revision: String(n) } },
        { timeoutMs: 10_000 },
      );
      if (n % 5 === 0) {
        // a new key now and then, so the secret controller has something to record
        await this.client.mergePatch(
          `/api/v1/namespaces/${this.namespace}/secrets/demo-credentials`,
          {
            data: { [`key-${n % 4}`]: Buffer.from(String(n)).toString('base64') },
          },
          { timeoutMs: 10_000 },
        );
      }
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 0 && !this.timer)) {
        this.log.warn('demo load update failed', { error: err instanceof Error ? err.message : String(err) });
      }
    } finally {
      this.busy = false;
    }
  }
}
