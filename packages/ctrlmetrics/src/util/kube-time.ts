/** `metav1.Time` on the wire: RFC 3339 in UTC with second precision (`2026-11-27T08:00:00Z`). */
export function kubeTime(ms: number = Date.now()): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
