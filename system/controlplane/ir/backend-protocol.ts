// The protocol a backend Service port speaks, from its `appProtocol` (Gateway API GEP-1911 "Backend Protocol
// Selection", geps/gep-1911): `kubernetes.io/h2c` is HTTP/2 in the clear with prior knowledge (RFC 9113 §3.3), and
// the proxy speaks HTTP/2 to it; no appProtocol, or any other value, is HTTP/1.1 (absent). The one place this rule
// lives: the routes' clusters take it from here (ir/routes.ts), and the translator turns it into the cluster's
// HttpProtocolOptions (xds/translator/cluster.ts). (Other helpers add `kubernetes.io/ws` here.)
import type { ClusterIR } from './types.ts';

export function backendProtocol(appProtocol: string | undefined): ClusterIR['protocol'] {
  switch (appProtocol) {
    case 'kubernetes.io/h2c':
      return 'http2';
    default:
      return undefined;
  }
}
