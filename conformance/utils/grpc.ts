// Upstream's gRPC conformance client (Gateway API v1.6.1 conformance/utils/grpc/grpc.go) over @grpc/grpc-js: one RPC
// of the GrpcEcho service (Echo, EchoTwo or EchoThree; system/echo/grpcecho.proto) to the gateway in cleartext HTTP/2,
// with the expected `:authority` and metadata, its status code and echoed assertions compared as compareResponse does
// (code; for OK the fully qualified method, the namespace and the pod's name prefix); the eventually-consistent wait
// (AwaitConvergence, utils/http.ts); AddEntropy's x-jitter metadata. As upstream's DefaultClient, a client connection
// is kept per expected response (so per test case) and dropped after an INTERNAL status.
import * as grpc from '@grpc/grpc-js';
import { type EchoResponse, GRPC_ECHO_SERVICE, grpcEchoService } from '../../system/echo/grpc.ts';
import type { TimeoutConfig } from './config.ts';
import { awaitConvergence } from './http.ts';
import { randomEntropy } from './weight.ts';

export interface GrpcExpectedResponse {
  /** Which method: Echo (default), EchoTwo or EchoThree. */
  method?: 'Echo' | 'EchoTwo' | 'EchoThree';
  requestMetadata?: { authority?: string; metadata?: Record<string, string> };
  /** The expected status code (grpc.status); default OK. */
  code?: grpc.status;
  backend?: string;
  namespace?: string;
  testCaseName?: string;
}

export interface GrpcResponse {
  code: grpc.status;
  response?: EchoResponse;
}

const methodOf = (e: GrpcExpectedResponse) => e.method ?? 'Echo';
const fullyQualifiedMethod = (e: GrpcExpectedResponse) => `/${GRPC_ECHO_SERVICE}/${methodOf(e)}`;

/** Upstream's GetTestCaseName. */
export function grpcTestCaseName(e: GrpcExpectedResponse, i: number): string {
  if (e.testCaseName) return e.testCaseName;
  const md = e.requestMetadata?.metadata ?? {};
  const keys = Object.keys(md).sort();
  const headers = keys.length ? ` with headers '{${keys.map((k) => `${k}:${md[k]}`).join(',')}}'` : '';
  const req = `${i} request to '${e.requestMetadata?.authority ?? ''}${fullyQualifiedMethod(e)}'${headers}`;
  if (e.backend) return `${req} should go to ${e.backend}`;
  const code = e.code ?? grpc.status.OK;
  return `${req} should receive a ${grpcCodeName(code)} (${code})`;
}

/** Go's codes.Code.String(): `Unimplemented`, `OK`, … */
export function grpcCodeName(code: grpc.status): string {
  const name = grpc.status[code] ?? String(code);
  return name === 'OK' ? 'OK' : name.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());
}

/** Upstream's DefaultClient: one connection, opened on first use with the expected authority. */
export class GrpcClient {
  private client: grpc.Client | undefined;

  private connect(address: string, authority: string | undefined): grpc.Client {
    if (!this.client) {
      const Client = grpcEchoService();
      this.client = new Client(address, grpc.credentials.createInsecure(), {
        ...(authority ? { 'grpc.default_authority': authority } : {}),
      });
    }
    return this.client;
  }

  /** SendRPC: resolves with the status code (and the response when OK); rejects only when no RPC could be made. */
  sendRPC(address: string, e: GrpcExpectedResponse, timeoutMs: number): Promise<GrpcResponse> {
    const client = this.connect(address, e.requestMetadata?.authority);
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(e.requestMetadata?.metadata ?? {})) md.set(k.toLowerCase(), v);
    return new Promise((resolve) => {
      (client as any)[methodOf(e)](
        {},
        md,
        { deadline: Date.now() + timeoutMs },
        (err: grpc.ServiceError | null, res: EchoResponse) => {
          if (!err) return resolve({ code: grpc.status.OK, response: res });
          if (err.code === grpc.status.INTERNAL) this.close();
          resolve({ code: err.code });
        },
      );
    });
  }

  close(): void {
    this.client?.close();
    this.client = undefined;
  }
}

/** Upstream's compareResponse: undefined when the response is the expected one, else why not. */
export function compareGrpcResponse(e: GrpcExpectedResponse, r: GrpcResponse): string | undefined {
  const want = e.code ?? grpc.status.OK;
  if (want !== r.code) {
    return `expected status code to be ${grpcCodeName(want)} (${want}), but got ${grpcCodeName(r.code)} (${r.code})`;
  }
  if (r.code !== grpc.status.OK) return undefined;
  const a = r.response?.assertions;
  if (fullyQualifiedMethod(e) !== a?.fullyQualifiedMethod) {
    return `expected path to be ${fullyQualifiedMethod(e)}, got ${a?.fullyQualifiedMethod}`;
  }
  if (e.namespace && e.namespace !== a.context?.namespace) {
    return `expected namespace to be ${e.namespace}, got ${a.context?.namespace}`;
  }
  if (!(a.context?.pod ?? '').startsWith(e.backend ?? '')) {
    return `expected pod name to start with ${e.backend}, got ${a.context?.pod}`;
  }
  return undefined;
}

/** Upstream's grpc.MakeRequestAndExpectEventuallyConsistentResponse. */
export async function makeGrpcRequestAndExpectEventuallyConsistentResponse(
  tc: TimeoutConfig,
  gwAddr: string,
  e: GrpcExpectedResponse,
): Promise<void> {
  const c = new GrpcClient();
  try {
    await awaitConvergence(tc.requiredConsecutiveSuccesses, tc.maxTimeToConsistency, async (elapsed) => {
      const r = await c.sendRPC(gwAddr, e, Math.max(1, tc.maxTimeToConsistency - elapsed));
      const miss = compareGrpcResponse(e, r);
      return miss ? `response expectation failed: ${miss}` : undefined;
    });
  } finally {
    c.close();
  }
}

/** Upstream's AddEntropy: half the time an `x-jitter` metadata pair with a random value. */
export function addGrpcEntropy(e: GrpcExpectedResponse): GrpcExpectedResponse {
  const jitter = randomEntropy()?.['X-Jitter'];
  if (jitter === undefined) return e;
  const rm = e.requestMetadata ?? {};
  return { ...e, requestMetadata: { ...rm, metadata: { ...(rm.metadata ?? {}), 'x-jitter': jitter } } };
}
