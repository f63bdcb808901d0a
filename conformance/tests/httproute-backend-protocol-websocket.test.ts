// Upstream conformance test HTTPRouteBackendProtocolWebSocket (Gateway API v1.6.1
// conformance/tests/httproute-backend-protocol-websocket.go), with its manifest and expectations: a WebSocket through
// the Gateway to infra-backend-v1's port 8082 (appProtocol kubernetes.io/ws), a text frame and a binary frame echoed
// by the echo's /ws (echo-basic's wsHandler). Upstream dials with golang.org/x/net/websocket and origin
// `ws://gateway/<test name>`; here the `ws` package does, with the same origin, converging as upstream does.
import { it } from 'vitest';
import WebSocket from 'ws';
import { runConformanceTest } from '../support/run.ts';
import { awaitConvergence } from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

/** One dial, a text and a binary round trip; undefined on success, else what went wrong (upstream's t.Log lines). */
async function roundTrips(gwAddr: string, origin: string): Promise<string | undefined> {
  const ws = new WebSocket(`ws://${gwAddr}/ws`, { origin, handshakeTimeout: 10_000 });
  try {
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('unexpected-response', (req, res) => {
        req.destroy();
        fail(new Error(`bad status ${res.statusCode}`));
      });
      ws.once('error', fail);
    });
  } catch (err) {
    ws.terminate();
    return `failed to dial ${(err as Error).message}`;
  }
  const next = () =>
    new Promise<Buffer>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error('no frame within 10s')), 10_000);
      ws.once('message', (data) => {
        clearTimeout(timer);
        ok(data as Buffer);
      });
    });
  try {
    const textMessage = 'Websocket Support!';
    ws.send(textMessage);
    const textReply = (await next()).toString();
    if (textReply !== textMessage) return `unexpected reply - want: ${textMessage} got: ${textReply}`;
    const binaryMessage = Buffer.from([1, 2, 3, 4, 5, 6, 7]);
    ws.send(binaryMessage, { binary: true });
    const binaryReply = await next();
    if (!binaryReply.equals(binaryMessage))
      return `unexpected reply - want: ${[...binaryMessage]} got: ${[...binaryReply]}`;
    return undefined;
  } catch (err) {
    return `failed to receive frame ${(err as Error).message}`;
  } finally {
    ws.terminate();
  }
}

runConformanceTest({
  shortName: 'HTTPRouteBackendProtocolWebSocket',
  description: 'A HTTPRoute with a BackendRef that has an appProtocol kubernetes.io/ws should be functional',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendProtocolWebSocket'],
  manifests: ['tests/httproute-backend-protocol-websocket.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'backend-protocol-ws' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    it('websocket connection should reach backend', async () => {
      const gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      const origin = 'ws://gateway/HTTPRouteBackendProtocolWebSocket/websocket_connection_should_reach_backend';
      await awaitConvergence(s.timeoutConfig.requiredConsecutiveSuccesses, s.timeoutConfig.maxTimeToConsistency, () =>
        roundTrips(gwAddr, origin),
      );
    });
  },
});
