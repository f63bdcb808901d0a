// TrafficPolicy `extProc` → envoy.filters.http.ext_proc: one filter per GatewayExtension (type extProc) the listener's
// routes use (`envoy.filters.http.ext_proc/<ns>/<name>`: grpc_service.envoy_grpc on the processor's HTTP/2 cluster,
// processing_mode with request headers sent or skipped and every response phase skipped, message_timeout,
// failure_mode_allow), and ExtProcPerRoute{disabled: true} on the listener's routes that use another or none, as
// Envoy Gateway's ext_proc translation writes them (internal/xds/translator/extproc.go).
import type { ExtProcIR, RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const EXT_PROC = 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor';
const EXT_PROC_PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute';

function used(routes: readonly RouteIR[]): ExtProcIR[] {
  const out = new Map<string, ExtProcIR>();
  for (const r of routes) {
    const p = r.policy.extProc;
    if (p && !p.disabled) out.set(p.ext.filterName, p.ext);
  }
  return [...out.values()].sort((a, b) => (a.filterName < b.filterName ? -1 : a.filterName > b.filterName ? 1 : 0));
}

function filter(e: ExtProcIR): Json {
  return {
    name: e.filterName,
    typed_config: {
      '@type': EXT_PROC,
      grpc_service: {
        envoy_grpc: { cluster_name: e.cluster.name, ...(e.authority ? { authority: e.authority } : {}) },
      },
      ...(e.failOpen ? { failure_mode_allow: true } : {}),
      processing_mode: {
        ...(e.requestHeaders ? {} : { request_header_mode: 'SKIP' }),
        response_header_mode: 'SKIP',
      },
      message_timeout: e.messageTimeout,
    },
  };
}

export const extProcFilter = {
  forListener(routes: readonly RouteIR[]) {
    const exts = used(routes);
    return {
      chain: exts.map(filter),
      perRoute(r: RouteIR): Json {
        const p = r.policy.extProc;
        const mine = p && !p.disabled ? p.ext.filterName : undefined;
        const out: Json = {};
        for (const e of exts)
          if (e.filterName !== mine) out[e.filterName] = { '@type': EXT_PROC_PER_ROUTE, disabled: true };
        return out;
      },
    };
  },
};
