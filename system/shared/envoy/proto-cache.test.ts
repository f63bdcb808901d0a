// The cached Envoy root (proto-cache.ts) against the root parsed from the .proto files: the same types, fields and
// options (toJSON), the same structured custom options validate.ts reads, the same files, so lazy package loads and
// validation behave alike; and the gRPC service definitions built from it against @grpc/proto-loader's.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parsedOptionsOf, readCachedRoot, writeCachedRoot } from './proto-cache.ts';
import { envoyService, PROTO_INCLUDE_DIRS, parseEnvoyRootUncached } from './protos.ts';

const dir = mkdtempSync(join(tmpdir(), 'gwlab-proto-cache-'));
afterAll(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('the cached Envoy root', () => {
  vi.spyOn(module, 'getCompileCacheDir').mockReturnValue(dir);
  const inputs = ['test', Date.now()];

  it('is written once parsed and read back equal to the parsed root, custom options and files included', () => {
    expect(readCachedRoot(inputs)).toBeUndefined();
    const parsed = parseEnvoyRootUncached();
    writeCachedRoot(inputs, parsed);
    expect(readdirSync(dir).filter((f) => f.startsWith('envoy-protos-'))).toHaveLength(1);
    const cached = readCachedRoot(inputs);
    expect(cached).toBeDefined();
    expect(cached!.toJSON()).toEqual(parsed.toJSON());
    expect(cached!.files).toEqual(parsed.files);
    const options = parsedOptionsOf(cached!);
    expect(options).toEqual(parsedOptionsOf(parsed));
    // What validate.ts reads: a field's (validate.rules).
    expect(new Map(options).get('.envoy.config.listener.v3.Listener.name')).toBeUndefined();
    expect(
      JSON.stringify(new Map(options).get('.envoy.config.route.v3.RouteConfiguration.request_headers_to_add')),
    ).toContain('validate.rules');
  });

  it('loads a package outside the preloaded files after a cached read without redefining what it imports', () => {
    const cached = readCachedRoot(inputs)!;
    cached.resolvePath = (_o, target) => PROTO_INCLUDE_DIRS.map((d) => join(d, target)).find(existsSync) ?? target;
    cached.loadSync('envoy/extensions/filters/http/lua/v3/lua.proto', { keepCase: true });
    cached.resolveAll();
    expect(cached.lookupType('envoy.extensions.filters.http.lua.v3.Lua').fieldsArray.length).toBeGreaterThan(0);
  });

  it('is ignored when it cannot be read (the caller parses instead)', () => {
    const other = ['broken', Date.now()];
    writeCachedRoot(other, parseEnvoyRootUncached());
    const file = readdirSync(dir).find((f) => f.startsWith('envoy-protos-') && !f.endsWith('.tmp'));
    for (const f of readdirSync(dir)) writeFileSync(join(dir, f), '{"root":');
    expect(file).toBeDefined();
    expect(readCachedRoot(other)).toBeUndefined();
  });
});

describe('service definitions from the shared root', () => {
  it("match @grpc/proto-loader's for the same options: paths, streaming, and what goes over the wire", () => {
    const file = 'envoy/service/ratelimit/v3/rls.proto';
    const name = 'envoy.service.ratelimit.v3.RateLimitService';
    const ours = envoyService(file, name, { longs: Number });
    const pkg = protoLoader.loadSync(file, {
      keepCase: true,
      longs: Number,
      enums: String,
      arrays: true,
      oneofs: true,
      includeDirs: [...PROTO_INCLUDE_DIRS],
    });
    const theirs = pkg[name] as protoLoader.ServiceDefinition;
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    for (const [m, def] of Object.entries(theirs)) {
      const o = ours[m]!;
      expect([o.path, o.requestStream, o.responseStream, o.originalName]).toEqual([
        def.path,
        def.requestStream,
        def.responseStream,
        def.originalName,
      ]);
      const request = {
        domain: 'gw',
        descriptors: [{ entries: [{ key: 'path', value: '/a' }] }],
        hits_addend: 3,
      };
      const wire = o.requestSerialize(request);
      expect(wire).toEqual(def.requestSerialize(request));
      expect(o.requestDeserialize(wire)).toEqual(def.requestDeserialize(wire));
      const response = { overall_code: 'OVER_LIMIT', statuses: [{ code: 'OVER_LIMIT', limit_remaining: 0 }] };
      const out = o.responseSerialize(response);
      expect(out).toEqual(def.responseSerialize(response));
      expect(o.responseDeserialize(out)).toEqual(def.responseDeserialize(out));
    }
  });
});
