// Helpers the workload controllers share: ownership, pod readiness and availability, names and hashes. (Their work
// queue and informers are controller.ts.)
// (Label selectors are system/shared/selectors.ts, the one implementation the API server and control plane use too.)
import type { KObject } from '../../../system/shared/kobject.ts';

export function controllerOf(o: KObject): { uid: string; kind: string; name: string } | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller);
}

export function isPodReady(pod: any): boolean {
  return (pod.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
}

export function isPodActive(pod: any): boolean {
  return !pod.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(pod.status?.phase);
}

/** Ready for at least minReadySeconds (Kubernetes' "available"). */
export function isPodAvailable(pod: any, minReadySeconds: number, now = Date.now()): boolean {
  if (!isPodReady(pod)) return false;
  if (!minReadySeconds) return true;
  const c = (pod.status?.conditions ?? []).find((x: any) => x.type === 'Ready');
  return !!c?.lastTransitionTime && new Date(c.lastTransitionTime).getTime() + minReadySeconds * 1000 <= now;
}

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** Kubernetes' rand.SafeEncodeString: no vowels, so generated names never spell words. */
export function safeEncode(s: string): string {
  let out = '';
  for (const ch of s) out += ALPHANUMS[ch.charCodeAt(0) % ALPHANUMS.length];
  return out;
}

/** JSON with object keys sorted, for comparisons that must not depend on key order. */
export function canonicalJson(value: unknown): string {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(canon(value));
}

/** FNV-1a 32-bit over a canonical JSON (sorted keys) of `value`, as the pod-template-hash label is computed. */
export function templateHash(value: unknown, collisionCount = 0): string {
  const text = canonicalJson(value) + (collisionCount ? String(collisionCount) : '');
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return safeEncode(String(h));
}

/** "25%" of n, rounded up or down; plain numbers as they are. */
export function intOrPercent(v: unknown, n: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  const s = String(v ?? '0');
  if (s.endsWith('%')) {
    const x = (Number(s.slice(0, -1)) * n) / 100;
    return roundUp ? Math.ceil(x) : Math.floor(x);
  }
  return Number(s) || 0;
}

export const rfc3339 = (d = new Date()) => d.toISOString().replace(/\.\d+Z$/, 'Z');
