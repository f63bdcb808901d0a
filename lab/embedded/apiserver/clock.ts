// Timestamps as Kubernetes writes them.

let nowCache = { sec: -1, iso: '' };

/** The current time as Kubernetes writes timestamps (RFC 3339, seconds); formatted once per second. */
export function now(): string {
  const sec = Math.floor(Date.now() / 1000);
  if (sec !== nowCache.sec) nowCache = { sec, iso: new Date(sec * 1000).toISOString().replace(/\.\d+Z$/, 'Z') };
  return nowCache.iso;
}
