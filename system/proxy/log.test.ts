// Unit tests of Envoy-format application log lines: the default and custom spdlog patterns, levels, source locations.
import { describe, expect, it } from 'vitest';
import { compileFormat, LogRegistry, parseLogLevel } from './log.ts';

describe('Envoy log lines', () => {
  it('default format: [date time.ms][thread][level][component] [file:line] [Tags] message', () => {
    const lines: string[] = [];
    const logs = new LogRegistry({ level: 'debug', sink: (l) => lines.push(l) });
    logs.logger('http').debug('new stream', { ConnectionId: 3 });
    logs.logger('config').warn('gRPC config for x rejected: y');
    expect(lines[0]).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\]\[\d+\]\[debug\]\[http\] \[system\/proxy\/log\.test\.ts:\d+\] \[Tags: "ConnectionId":"3"\] new stream$/,
    );
    expect(lines[1]).toMatch(
      /\]\[warning\]\[config\] \[system\/proxy\/log\.test\.ts:\d+\] gRPC config for x rejected: y$/,
    );
  });

  it('levels per component, changeable at run time; warn and warning both accepted', () => {
    const lines: string[] = [];
    const logs = new LogRegistry({ level: 'info', components: { upstream: 'debug' }, sink: (l) => lines.push(l) });
    logs.logger('http').debug('hidden');
    logs.logger('upstream').debug('shown');
    expect(lines).toHaveLength(1);
    logs.setAll('debug');
    logs.logger('http').debug('now shown');
    expect(lines).toHaveLength(2);
    logs.setLevel('http', parseLogLevel('warn')!);
    expect(logs.level('http')).toBe('warning');
    logs.logger('http').info('hidden again');
    expect(lines).toHaveLength(2);
    expect(parseLogLevel('WARNING')).toBe('warning');
    expect(parseLogLevel('critical')).toBe('critical');
    expect(parseLogLevel('verbose')).toBeUndefined();
    expect(() => logs.setLevel('nope', 'info')).toThrow('unknown logger name');
    expect(() => new LogRegistry({ components: { nope: 'info' } })).toThrow(/unknown component/);
  });

  it('lists Envoy component names, sorted', () => {
    const names = new LogRegistry().snapshot().map(([n]) => n);
    for (const c of [
      'admin',
      'client',
      'config',
      'connection',
      'conn_handler',
      'dns',
      'ext_authz',
      'filter',
      'grpc',
      'hc',
      'health_checker',
      'http',
      'http2',
      'init',
      'main',
      'misc',
      'pool',
      'rbac',
      'rds',
      'router',
      'runtime',
      'stats',
      'upstream',
      'websocket',
    ]) {
      expect(names).toContain(c);
    }
    expect(names).toEqual([...names].sort());
  });

  it('--log-format flags', () => {
    const f = compileFormat('%l|%L|%n|%g|%s|%#|%v|%j|%%|%t');
    const out = f('warning', 'router', 'system/proxy/filters/router/router.ts:42', 'say "hi"');
    expect(out).toBe(
      `warning|W|router|system/proxy/filters/router/router.ts|router.ts|42|say "hi"|say \\"hi\\"|%|${process.pid}`,
    );
    expect(compileFormat('[%Y-%m-%d %T.%e]')('info', 'x', 'f:1', 'm')).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\]$/,
    );
  });
});
