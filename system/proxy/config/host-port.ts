// Envoy's HeaderUtility::stripPortFromHost, shared by the connection manager (strip_any_host_port /
// strip_matching_host_port rewrite the Host header) and the route table (ignore_port_in_host_matching picks a virtual
// host without the port and leaves the header as it came).

/** Drops `:port` from a Host value (only `listenerPort` when given); IPv6 literals (`[::1]`) are kept whole. */
export function stripPort(host: string, listenerPort?: number): string {
  const colon = host.lastIndexOf(':');
  if (colon < 0) return host;
  const v6End = host.lastIndexOf(']');
  if (v6End > colon) return host;
  const portText = host.slice(colon + 1);
  if (!/^\d+$/.test(portText)) return host;
  if (listenerPort !== undefined && Number(portText) !== listenerPort) return host;
  return host.slice(0, colon);
}
