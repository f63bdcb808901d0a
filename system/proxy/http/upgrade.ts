// HTTP/1.1 upgrades (WebSocket) through the proxy, as Envoy handles them (docs: intro/arch_overview/http/upgrades;
// source/common/http/conn_manager_impl.cc, filter_manager.cc): the listener hands an upgrade request's raw connection
// to the connection manager (listener/active-listener.ts), which reads the upgrade type here and refuses one that
// neither the route nor the HCM allows (config/upgrade-config.ts: 403, details `upgrade_failed`,
// `downstream_rq_ws_on_non_ws_route`); the router then forwards it on a connection of its own and, after a 101,
// tunnels the bytes both ways (filters/router/upgrade.ts).
import type http from 'node:http';

/**
 * The upgrade a request asks for: its `Upgrade` token when `Connection` lists `upgrade` (lower-cased); CONNECT. An
 * h2c upgrade is none: Envoy's HTTP/1 codec removes it and serves the request as HTTP/1.1 (its Upgrade, Connection
 * and HTTP2-Settings headers are hop-by-hop here: active-stream.ts).
 */
export function upgradeTypeOf(method: string, headers: http.IncomingHttpHeaders): string | undefined {
  if (method === 'CONNECT') return 'connect';
  const up = headers.upgrade;
  const conn = headers.connection;
  if (!up || !conn) return undefined;
  const tokens = (Array.isArray(conn) ? conn.join(',') : conn).toLowerCase().split(',');
  const type = up.trim().toLowerCase();
  return tokens.some((t) => t.trim() === 'upgrade') && type !== 'h2c' ? type : undefined;
}
