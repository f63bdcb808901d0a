// bench:proxy's configuration of the proxy under test: a realistic route table (50 virtual hosts, 1,000 routes with
// header and regex matches, retries and header mutations; the measured request takes the 20th route of its host,
// after 19 that do not match) and the static bootstrap that serves it with the cors filter on one listener.
// `node bench/proxy.ts --bootstrap <app port>` prints that bootstrap, to run the proxy by hand against the same table.
import { bootstrapJson, listener, staticCluster } from '../../system/proxy/testing/harness.ts';
import { HOST, type J } from './settings.ts';

/** 49 filler virtual hosts of 20 routes each, then www.example.com whose 20th route sends /api/v20/ to `appCluster`. */
export function realisticRoutes(appCluster: string): J {
  const vhosts: J[] = [];
  for (let v = 0; v < 49; v++) {
    const routes: J[] = [];
    for (let r = 0; r < 20; r++) {
      routes.push({
        name: `svc${v}-r${r}`,
        match:
          r % 4 === 0
            ? { safe_regex: { regex: `/v${r}/items/[0-9]+` } }
            : { prefix: `/api/v${r}/`, headers: [{ name: 'x-tenant', string_match: { exact: `t${r}` } }] },
        route: {
          cluster: `svc-${v % 10}`,
          timeout: '10s',
          retry_policy: { retry_on: '5xx,connect-failure', num_retries: 2 },
        },
        request_headers_to_add: [{ header: { key: 'x-route', value: `svc${v}-r${r}` } }],
      });
    }
    vhosts.push({
      name: `svc-${v}`,
      domains: [`svc-${v}.example.com`, `svc-${v}.example.com:8080`, `*.svc-${v}.internal`],
      routes,
    });
  }
  // The target: the 20th route of www.example.com, after 19 routes that do not match.
  const www: J[] = [];
  for (let r = 0; r < 19; r++) {
    www.push({
      name: `www-r${r}`,
      match:
        r % 3 === 0
          ? { safe_regex: { regex: `/api/v${r}/[a-z]+/[0-9]+` } }
          : { prefix: `/api/v${r}/`, headers: [{ name: 'x-version', string_match: { prefix: 'beta' } }] },
      route: { cluster: 'svc-0' },
    });
  }
  www.push({
    name: 'www-target',
    match: { prefix: '/api/v20/' },
    route: {
      cluster: appCluster,
      prefix_rewrite: '/',
      timeout: '15s',
      retry_policy: { retry_on: '5xx', num_retries: 1 },
    },
    request_headers_to_add: [{ header: { key: 'x-gateway', value: 'gwlab' } }],
    response_headers_to_add: [{ header: { key: 'x-route', value: 'www-target' } }],
  });
  vhosts.push({ name: 'www', domains: [HOST, `${HOST}:8080`], routes: www });
  return { name: 'listener~8080', virtual_hosts: vhosts };
}

/** The static bootstrap: cluster `app` at 127.0.0.1:`appPort`, ten unreachable filler clusters, the route table. */
export function proxyBootstrap(appPort: number): J {
  const clusters: J[] = [staticCluster('app', [['127.0.0.1', appPort]])];
  for (let i = 0; i < 10; i++) clusters.push(staticCluster(`svc-${i}`, [['127.0.0.1', 1]]));
  const l = listener('listener~8080', 0, {
    accessLog: false,
    routeConfig: realisticRoutes('app'),
    filters: [
      {
        name: 'envoy.filters.http.cors',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' },
      },
    ],
    hcm: { strip_any_host_port: true },
  });
  return bootstrapJson({ staticClusters: clusters, staticListeners: [l] });
}
