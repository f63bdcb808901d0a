// The protocol the gateway speaks to a Service port, from the port's `appProtocol` (Gateway API's rule, GEP-1911
// "Backend Protocol Selection": `kubernetes.io/h2c` HTTP/2 with prior knowledge, `kubernetes.io/ws` WebSocket over
// HTTP/1.1; any other value or none: HTTP/1.1). The one place the control plane decides it (ClusterIR.protocol).
// `kubernetes.io/ws` needs no more from Envoy than HTTP/1.1 with upgrades allowed, which every connection manager
// does (xds/translator/listener.ts, as Envoy Gateway and kgateway enable websocket upgrades on every HCM), so its
// cluster is translated as an HTTP/1.1 one; the IR keeps the protocol so that what the Service asked for is seen.
import type { ClusterIR } from './types.ts';

export function backendProtocol(appProtocol: string | undefined): ClusterIR['protocol'] {
  switch (appProtocol) {
    case 'kubernetes.io/ws':
      return 'websocket';
    default:
      return undefined;
  }
}
