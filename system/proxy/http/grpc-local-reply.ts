// Envoy's local reply to a gRPC request (source/common/http/utility.cc, Utility::sendLocalReply with is_grpc): a request
// whose content-type is application/grpc (or application/grpc+<codec>, application/grpc;<params>; not grpc-web) gets a
// trailers-only gRPC response instead of an HTTP error: `:status 200`, `content-type: application/grpc`,
// `grpc-status` mapped from the HTTP status as gRPC's HTTP-to-gRPC mapping (source/common/grpc/status.cc,
// Utility::httpToGrpcStatus; doc/http-grpc-status-mapping.md: 400 INTERNAL, 401 UNAUTHENTICATED, 403
// PERMISSION_DENIED, 404 UNIMPLEMENTED, 429/502/503/504 UNAVAILABLE, anything else UNKNOWN) and the body, if any, as
// `grpc-message`, percent-encoded as gRPC asks (bytes outside 0x20-0x7E, and `%`); no body. So no route is
// grpc-status 12, a rule with no valid backend (503) 14, an ExtensionRef filter nothing resolves (500) 2.
import type { HeaderMap } from '../stream-info.ts';

/** Envoy's Grpc::Common::hasGrpcContentType. */
export function isGrpcRequest(headers: HeaderMap): boolean {
  const ct = headers['content-type'];
  const v = Array.isArray(ct) ? ct[0] : ct;
  if (typeof v !== 'string' || !v.startsWith('application/grpc')) return false;
  const rest = v.slice('application/grpc'.length);
  return rest === '' || rest[0] === '+' || rest[0] === ';';
}

/** gRPC status codes (grpc/include/grpcpp/impl/codegen/status_code_enum.h). */
export const GRPC_STATUS = {
  UNKNOWN: 2,
  PERMISSION_DENIED: 7,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export function httpToGrpcStatus(status: number): number {
  switch (status) {
    case 400:
      return GRPC_STATUS.INTERNAL;
    case 401:
      return GRPC_STATUS.UNAUTHENTICATED;
    case 403:
      return GRPC_STATUS.PERMISSION_DENIED;
    case 404:
      return GRPC_STATUS.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GRPC_STATUS.UNAVAILABLE;
    default:
      return GRPC_STATUS.UNKNOWN;
  }
}

/** gRPC's percent-encoding of grpc-message (PROTOCOL-HTTP2.md: "Percent-Encoded"). */
export function percentEncodeGrpcMessage(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    out +=
      b >= 0x20 && b <= 0x7e && b !== 0x25
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The headers of Envoy's trailers-only local reply to a gRPC request that would have been answered `status`. */
export function grpcLocalReplyHeaders(status: number, body: Buffer, headers: HeaderMap): HeaderMap {
  const out: HeaderMap = { ...headers, 'content-type': 'application/grpc' };
  delete out['content-length'];
  out['grpc-status'] = String(httpToGrpcStatus(status));
  if (body.length > 0) out['grpc-message'] = percentEncodeGrpcMessage(body.toString('utf8'));
  return out;
}
