// A listener's connection manager settings (HcmSettingsIR, from a ListenerPolicy or the GatewayParameters' default
// access log) → the HttpConnectionManager fields Envoy has for them, as kgateway's HTTPListenerPolicy and Envoy
// Gateway's ClientTrafficPolicy translate theirs: access_log (envoy.access_loggers.file, FileAccessLog with path,
// log_format text_format_source / json_format; filter status_code_filter / response_flag_filter, both: and_filter),
// common_http_protocol_options.idle_timeout, xff_num_trusted_hops, use_remote_address, max_request_headers_kb,
// server_header_transformation, http_protocol_options.header_key_format.stateful_formatter preserve_case. The
// listener's metadata names the policy each setting came from (LISTENER_PROVENANCE_KEY), so config_dump shows it.
import type { AccessLogIR, HcmSettingsIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

/** The filter_metadata key under which a Listener names the ListenerPolicy (or GatewayParameters) of each setting. */
export const LISTENER_PROVENANCE_KEY = 'listener.gateway.gwvendor.dev';

const FILE_ACCESS_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const PRESERVE_CASE =
  'type.googleapis.com/envoy.extensions.http.header_formatters.preserve_case.v3.PreserveCaseFormatterConfig';
/** RuntimeUInt32 requires a runtime key; no runtime overrides it, so default_value is what applies. */
const STATUS_RUNTIME_KEY = 'gwvendor.access_log.status_code';

function accessLogFilter(a: AccessLogIR): Json | undefined {
  const filters: Json[] = [];
  if (a.statusCode) {
    filters.push({
      status_code_filter: {
        comparison: {
          op: a.statusCode.op,
          value: { default_value: a.statusCode.value, runtime_key: STATUS_RUNTIME_KEY },
        },
      },
    });
  }
  if (a.responseFlags?.length) filters.push({ response_flag_filter: { flags: a.responseFlags } });
  if (filters.length > 1) return { and_filter: { filters } };
  return filters[0];
}

function accessLog(a: AccessLogIR): Json {
  const config: Json = { '@type': FILE_ACCESS_LOG, path: a.path };
  if (a.text !== undefined) config.log_format = { text_format_source: { inline_string: a.text } };
  else if (a.json !== undefined) config.log_format = { json_format: a.json };
  const filter = accessLogFilter(a);
  return { name: 'envoy.access_loggers.file', ...(filter ? { filter } : {}), typed_config: config };
}

/** The HCM fields to add, and the Listener's metadata with the provenance. */
export function hcmSettings(h: HcmSettingsIR | undefined): { hcm: Json; metadata?: Json } {
  if (!h) return { hcm: {} };
  const hcm: Json = {};
  if (h.accessLog?.length) hcm.access_log = h.accessLog.map(accessLog);
  if (h.idleTimeout !== undefined) hcm.common_http_protocol_options = { idle_timeout: h.idleTimeout };
  if (h.xffNumTrustedHops !== undefined) hcm.xff_num_trusted_hops = h.xffNumTrustedHops;
  if (h.useRemoteAddress !== undefined) hcm.use_remote_address = h.useRemoteAddress;
  if (h.maxRequestHeadersKb !== undefined) hcm.max_request_headers_kb = h.maxRequestHeadersKb;
  if (h.serverHeaderTransformation !== undefined) hcm.server_header_transformation = h.serverHeaderTransformation;
  if (h.preserveHttp1HeaderCase) {
    hcm.http_protocol_options = {
      header_key_format: { stateful_formatter: { name: 'preserve_case', typed_config: { '@type': PRESERVE_CASE } } },
    };
  }
  const prov = Object.entries(h.provenance);
  return {
    hcm,
    ...(prov.length ? { metadata: { filter_metadata: { [LISTENER_PROVENANCE_KEY]: Object.fromEntries(prov) } } } : {}),
  };
}
