// Weighted-distribution checks as upstream's conformance/utils/weight (Gateway API v1.6.1 weight.go, senders.go):
// 500 requests, 10 at a time, each pod's backend name taken from its name (without the Deployment and Pod hashes),
// every share within ±5 % of its weight, backends of weight 0 receiving nothing; up to 10 tries. AddRandomEntropy
// adds an X-Jitter header with a random value to half the requests.
import { randomInt } from 'node:crypto';

export const MAX_TEST_RETRIES = 10;

/** `{backend}-{deployment hash}-{pod hash}` → backend. */
export function extractBackendName(pod: string): string {
  const parts = pod.split('-');
  return parts.length < 3 ? pod : parts.slice(0, -2).join('-');
}

/** Half the time nothing, else a random X-Jitter value (upstream's AddRandomEntropy). */
export function randomEntropy(): Record<string, string> | undefined {
  return randomInt(2) === 0 ? undefined : { 'X-Jitter': String(randomInt(10_000)) };
}

/** Upstream's TestWeightedDistribution: undefined when the shares match, else why not. */
export async function testWeightedDistribution(
  send: () => Promise<string>,
  expected: Record<string, number>,
): Promise<string | undefined> {
  const total = 500;
  const concurrent = 10;
  const tolerance = 0.05;
  const seen = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next++;
      const pod = await send();
      const backend = extractBackendName(pod);
      if (!(backend in expected))
        throw new Error(`request was handled by an unexpected pod "${pod}" (extracted backend: "${backend}")`);
      seen.set(backend, (seen.get(backend) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrent }, worker));
  } catch (err) {
    return `error while sending requests: ${(err as Error).message}`;
  }
  const errs: string[] = [];
  const active = Object.values(expected).filter((w) => w > 0).length;
  if (seen.size !== active) errs.push(`expected ${active} backends to receive traffic, but got ${seen.size}`);
  for (const [backend, want] of Object.entries(expected)) {
    const got = seen.get(backend);
    if (got === undefined && want !== 0) {
      errs.push(`expect traffic to hit backend "${backend}" - but none was received`);
      continue;
    }
    const share = (got ?? 0) / total;
    if (Math.abs(share - want) > tolerance)
      errs.push(`backend "${backend}" weighted traffic of ${share} not within tolerance ${want} (+/-${tolerance})`);
  }
  return errs.length ? errs.sort().join('; ') : undefined;
}
