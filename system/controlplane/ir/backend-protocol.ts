// The protocol a backend Service port speaks, from its `appProtocol` (Gateway API GEP-1911 "Backend Protocol
// Selection", geps/gep-1911): `kubernetes.io/h2c` is HTTP/2 in the clear with prior knowledge (RFC 9113 §3.3), and
// the proxy speaks HTTP/2 to it; `kubernetes.io/ws` is WebSocket over HTTP/1.1, which needs no more from Envoy than
// HTTP/1.1 with upgrades allowed, which every connection manager does (xds/translator/listener.ts, as Envoy Gateway
// and kgateway enable websocket upgrades on every HCM), so its cluster is translated as an HTTP/1.1 one and the IR
// keeps the protocol so that what the Service asked for is seen; no appProtocol, or any other value, is HTTP/1.1
// (absent). The one place this rule lives: the routes' clusters take it from here (ir/routes.ts), and the translator
// turns it into the cluster's HttpProtocolOptions (xds/translator/cluster.ts).
import type { ClusterIR } from './types.ts';

export function backendProtocol(appProtocol: string | undefined): ClusterIR['protocol'] {
  switch (appProtocol) {
    case 'kubernetes.io/h2c':
      return 'http2';
    case 'kubernetes.io/ws':
      return 'websocket';
    default:
      return undefined;
  }
}
