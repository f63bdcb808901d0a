// The debug lines users look for appear after POST /logging?level=debug, where the events happen, and stop after
// ?level=info.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
import {
  cla,
  edsCluster,
  eventually,
  httpRequest,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../testing/harness.ts';

const APP = 'kube_sampleapp_sampleapp_8000';
const L = 'listener~8080';
let app: SampleApp;
let app2: SampleApp;
let fx: XdsFixture;

beforeAll(async () => {
  [app, app2] = await Promise.all([startSampleApp(), startSampleApp()]);
  fx = await startXdsFixture({ bootstrap: { stats_flush_interval: '0.1s' } });
  await fx.apply({
    clusters: [edsCluster(APP)],
    endpoints: [cla(APP, [['127.0.0.1', app.port]])],
    listeners: [listener(L, 0, { rds: L })],
    routes: [routeConfig(L, [vhost('www', ['www.example.com'], [route('/', APP)])])],
  });
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  await Promise.all([app?.close(), app2?.close()]);
});

/** The Envoy line shape: [time][thread][level][component] [file:line] [Tags: ...] message */
function line(level: string, component: string, message: RegExp): RegExp {
  return new RegExp(
    `^\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\]\\[\\d+\\]\\[${level}\\]\\[${component}\\] \\[[^\\]]+:\\d+\\] ${message.source}`,
  );
}

const EXPECTED: Array<[string, RegExp]> = [
  ['conn_handler', /\[Tags: "ConnectionId":"\d+"\] new connection from 127\.0\.0\.1:\d+$/],
  ['http', /\[Tags: "ConnectionId":"\d+"\] new stream$/],
  ['http', /\[Tags: "ConnectionId":"\d+","StreamId":"\d+"\] request headers complete \(end_stream=true\):/],
  [
    'router',
    /\[Tags: "ConnectionId":"\d+","StreamId":"\d+"\] cluster 'kube_sampleapp_sampleapp_8000' match for URL '\/headers'$/,
  ],
  ['router', /\[Tags: [^\]]+\] upstream headers complete: end_stream=false/],
  ['pool', /\[Tags: [^\]]+\] queueing stream due to no available connections \(ready=0 busy=0 connecting=0\)$/],
  ['pool', /creating a new connection \(connecting=0\)$/],
  ['client', /\[Tags: "ConnectionId":"\d+"\] connecting$/],
  ['connection', /\[Tags: "ConnectionId":"\d+"\] connecting to 127\.0\.0\.1:\d+$/],
  ['client', /\[Tags: "ConnectionId":"\d+"\] connected$/],
  ['main', /flushing stats$/],
];

it('debug lines appear after POST /logging?level=debug and disappear after ?level=info', async () => {
  const port = fx.proxy.port(L);
  const logs = fx.proxy.logs;
  // At info: none of them.
  let from = logs.length;
  expect(
    (await httpRequest(`http://127.0.0.1:${port}/headers`, { host: 'www.example.com', agent: false })).status,
  ).toBe(200);
  fx.proxy.server.flushStats(); // would log "flushing stats" at debug
  expect(logs.slice(from).filter((l) => l.includes('][debug]['))).toEqual([]);

  expect((await fx.proxy.admin('/logging?level=debug', 'POST')).status).toBe(200);
  from = logs.length;
  // A new endpoint (so a new upstream connection) to see the connection lines.
  await fx.apply({ endpoints: [cla(APP, [['127.0.0.1', app2.port]])] });
  const r = await httpRequest(`http://127.0.0.1:${port}/headers`, { host: 'www.example.com', agent: false });
  expect(r.status).toBe(200);
  await eventually(
    () => logs.slice(from).some((l) => /\]\[debug\]\[main\] .*flushing stats$/.test(l)),
    5000,
    'flushing stats',
  );
  const seen = logs.slice(from);
  for (const [component, message] of EXPECTED) {
    expect(
      seen.some((l) => line('debug', component, message).test(l)),
      `${component}: ${message}`,
    ).toBe(true);
  }

  expect((await fx.proxy.admin('/logging?level=info', 'POST')).status).toBe(200);
  from = logs.length;
  expect(
    (await httpRequest(`http://127.0.0.1:${port}/headers`, { host: 'www.example.com', agent: false })).status,
  ).toBe(200);
  fx.proxy.server.flushStats();
  expect(logs.slice(from).filter((l) => l.includes('][debug]['))).toEqual([]);
});

it('a per-component level: only that component logs at debug', async () => {
  const logs = fx.proxy.logs;
  expect((await fx.proxy.admin('/logging?router=debug', 'POST')).status).toBe(200);
  const from = logs.length;
  await httpRequest(`http://127.0.0.1:${fx.proxy.port(L)}/headers`, { host: 'www.example.com' });
  const debug = logs.slice(from).filter((l) => l.includes('][debug]['));
  expect(debug.length).toBeGreaterThan(0);
  expect(debug.every((l) => l.includes('][debug][router] '))).toBe(true);
  await fx.proxy.admin('/logging?level=info', 'POST');
});
