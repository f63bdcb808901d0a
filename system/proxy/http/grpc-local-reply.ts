// Local replies to gRPC requests as Envoy sends them (source/common/http/utility.cc sendLocalReply with
// is_grpc_request; source/common/grpc/common.cc isGrpcRequestHeaders, utility httpToGrpcStatus): a request whose
// content-type is application/grpc (or application/grpc+<codec>) gets HTTP 200 with content-type application/grpc,
// grpc-status mapped from the reply's HTTP status and grpc-message the reply's body (percent-encoded as the gRPC
// spec asks), no body: a trailers-only response, so a gRPC client reads Envoy's status and message.
import type { HeaderMap } from '../stream-info.ts';

/** Grpc::Common::isGrpcRequestHeaders' content-type rule. */
export function isGrpcContentType(ct: unknown): boolean {
  if (typeof ct !== 'string') return false;
  return ct === 'application/grpc' || ct.startsWith('application/grpc+') || ct.startsWith('application/grpc;');
}

/** Grpc::Utility::httpToGrpcStatus. */
export function httpToGrpcStatus(status: number): number {
  switch (status) {
    case 400:
      return 13; // INTERNAL
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 12; // UNIMPLEMENTED
    case 429:
    case 502:
    case 503:
    case 504:
      return 14; // UNAVAILABLE
    default:
      return 2; // UNKNOWN
  }
}

/** gRPC's Percent-Encoded grpc-message: bytes outside 0x20-0x7E, and '%', as %XX. */
function percentEncode(text: string): string {
  let out = '';
  for (const b of Buffer.from(text)) {
    out +=
      b >= 0x20 && b <= 0x7e && b !== 0x25
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The headers of a gRPC local reply (status 200, no body) for an HTTP local reply of `status` with `body`. */
export function grpcLocalReplyHeaders(status: number, body: Buffer, extra: HeaderMap = {}): HeaderMap {
  const headers: HeaderMap = {
    ...extra,
    'content-type': 'application/grpc',
    'grpc-status': String(httpToGrpcStatus(status)),
  };
  if (body.length > 0) headers['grpc-message'] = percentEncode(body.toString());
  return headers;
}
