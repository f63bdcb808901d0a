// The embedded Kubernetes API server of a lab: `startApiServer(opts)` serves HTTPS on loopback with the lab's own CA,
// requires bearer tokens (admin token in the kubeconfig; service-account JWTs under RBAC), stores objects durably in
// labPaths().store and writes the request log to labPaths().auditLog. See README.md in this folder for the seams.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { type Logger, LogRegistry } from '../../../system/shared/log.ts';
import { type AddressPlan, labPaths, addressPlan as planFor } from '../../state.ts';
import { type ClientCredentials, sharedTlsConnector, unixSocketConnector } from '../client/kube-client.ts';
import { ValidatingAdmission } from './admission/plugin.ts';
import { Authenticator, type TokenOptions } from './authn.ts';
import { setupConnections } from './connection.ts';
import { Core } from './core.ts';
import { ApiError } from './errors.ts';
import { EscalationCheck } from './escalation.ts';
import { EventTtl } from './event-ttl.ts';
import type { SubresourceHandler } from './handlers/subresources.ts';
import { ensurePki, type Pki } from './pki.ts';
import { Authorizer, bootstrapPolicy } from './rbac.ts';
import { ResourceRegistry } from './resources.ts';
import { HttpApi } from './server.ts';
import { type K8sObject, Store } from './store.ts';
import { loadModelValidators } from './validation.ts';

export type { TokenOptions, UserInfo } from './authn.ts';
export type { SubresourceHandler, SubresourceRequest } from './handlers/subresources.ts';
export type { K8sObject } from './store.ts';

export interface ApiServerOptions {
  labName: string;
  /** GWLAB_HOME; default from the environment (lab/state.ts). */
  home?: string;
  host?: string;
  /** 0 or omitted: the port this lab used before, else a free one. */
  port?: number;
  /** Extra IP SANs for the serving certificate (the `kubernetes` Service ClusterIP is added from addressPlan). */
  extraSans?: string[];
  /** The lab's loopback address plan: ClusterIPs are allocated from 127.<serviceOctet>.x.y. Default: index 0. */
  addressPlan?: AddressPlan;
  logRegistry?: LogRegistry;
  /** Keep-alive newline interval on idle watches (default 5 s). */
  watchKeepAliveMs?: number;
  /** BOOKMARK interval for watches that allow them (default 60 s). */
  watchBookmarkMs?: number;
  /** Request bodies above this get 413 (default 3 MiB). */
  maxBodyBytes?: number;
  /** Events kept in memory for watch resumption (default 10,000, min 1,000). */
  watchHistory?: number;
  /**
   * kube-apiserver's --api-audiences: a service-account token is accepted only if its `aud` names one of them, and
   * TokenRequests without audiences get them. Default: the issuer, https://kubernetes.default.svc.cluster.local.
   */
  apiAudiences?: string[];
  /**
   * kube-apiserver's --service-account-max-token-expiration: a TokenRequest asking for a longer lifetime gets this many
   * seconds (and a warning). The lab's short-TTL option, so that tests cross token renewals in seconds.
   */
  serviceAccountMaxTokenExpirationSeconds?: number;
  /** kube-apiserver's --event-ttl: an Event is deleted this long after its last write (default 3600 s). */
  eventTtlSeconds?: number;
}

export interface ApiServerHandle {
  url: string;
  host: string;
  port: number;
  kubeconfigPath: string;
  caPem: string;
  adminToken: string;
  /**
   * A service-account JWT the server accepts (RBAC applies). Lifetime 3600 s unless `expirationSeconds` says otherwise
   * (TokenRequest's default); audiences the server's API audiences unless given.
   */
  issueServiceAccountToken(namespace: string, serviceAccount: string, opts?: TokenOptions): string;
  /** A token for a privileged in-process identity, e.g. `system:controller:garbage-collector` (bypasses RBAC). */
  issuePrivilegedToken(username: string): string;
  /**
   * A client-node KubeConfig for this server: admin by default, or a privileged identity named `user`. Async because
   * client-node is loaded on first use (the server itself does not need it: ~85 MB of resident memory).
   */
  kubeConfig(opts?: { user?: string }): Promise<KubeConfig>;
  /**
   * The same identity as plain credentials, for the embedded cluster's own KubeClient (no client-node); every call
   * carries the same TLS connector, so that this server's clients resume one another's TLS sessions.
   */
  credentials(opts?: { user?: string }): ClientCredentials;
  registerSubresource(resource: string, subresource: string, handler: SubresourceHandler): void;
  /** The store's current revision (tests, benchmark). */
  revision(): number;
  stop(): Promise<void>;
}

const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function readPort(file: string): number | undefined {
  try {
    const p = JSON.parse(readFileSync(file, 'utf8')).port;
    return Number.isInteger(p) && p > 0 ? p : undefined;
  } catch {
    return undefined;
  }
}

export function kubeconfigYaml(name: string, url: string, caPem: string, token: string): string {
  const ctx = `gwlab-${name}`;
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${ctx}`,
    '  cluster:',
    `    server: ${url}`,
    `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`,
    'users:',
    `- name: ${ctx}-admin`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    `- name: ${ctx}`,
    '  context:',
    `    cluster: ${ctx}`,
    `    user: ${ctx}-admin`,
    '    namespace: default',
    `current-context: ${ctx}`,
    '',
  ].join('\n');
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServerHandle> {
  const paths = labPaths(opts.labName, opts.home);
  const logs = opts.logRegistry ?? new LogRegistry();
  const log = logs.logger('apiserver');
  const host = opts.host ?? '127.0.0.1';
  const plan = opts.addressPlan ?? planFor(0);
  const kubernetesIp = `127.${plan.serviceOctet}.0.1`;
  mkdirSync(paths.store, { recursive: true });
  const t0 = performance.now();

  await loadModelValidators();
  const pki = ensurePki(
    paths.pki,
    opts.labName,
    [...(opts.extraSans ?? []), kubernetesIp, host].filter((h) => /^[\d.:]+$/.test(h)),
  );
  const store = new Store({ file: join(paths.store, 'state.db'), historySize: opts.watchHistory });
  const { core, authn, authz } = assemble(opts, store, pki, plan, log);

  let port = 0;
  const portFile = join(paths.store, 'apiserver.json');
  const api = new HttpApi(core, authn, authz, {
    maxBodyBytes: opts.maxBodyBytes ?? 3 * 1024 * 1024,
    keepAliveMs: opts.watchKeepAliveMs ?? 5000,
    bookmarkMs: opts.watchBookmarkMs ?? 60_000,
    auditLog: paths.auditLog,
    log,
    serverAddress: () => `${host}:${port}`,
    serviceAccountMaxTokenExpirationSeconds: opts.serviceAccountMaxTokenExpirationSeconds,
  });

  const server = serving(
    https.createServer({ key: pki.keyPem, cert: pki.certPem, keepAliveTimeout: 120_000 }),
    api,
    log,
  );

  const wanted = opts.port || readPort(portFile) || 0;
  try {
    await listen(server, { host, port: wanted });
  } catch (e) {
    if (!opts.port && wanted && (e as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      log.warn('the port this lab used before is taken; choosing another (kubeconfig rewritten)', { port: wanted });
      await listen(server, { host, port: 0 });
    } else {
      store.close();
      api.close();
      throw e;
    }
  }
  port = (server.address() as AddressInfo).port;
  writeFileSync(portFile, JSON.stringify({ port }) + '\n');
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  writeFileSync(paths.kubeconfig, kubeconfigYaml(opts.labName, url, pki.caPem, pki.adminToken), { mode: 0o600 });

  const loopback = await listenLoopback(api, join(paths.store, 'apiserver.sock'), log);

  bootstrap(core, store, kubernetesIp, port);
  const eventTtl = new EventTtl(store, { ttlSeconds: opts.eventTtlSeconds });
  log.info('API server ready', {
    url,
    kubeconfig: paths.kubeconfig,
    objects: store.bucketNames().reduce((n, b) => n + store.count(b), 0),
    revision: store.revision(),
    ms: Math.round(performance.now() - t0),
  });
  const handle = {
    opts,
    url,
    host,
    port,
    kubeconfigPath: paths.kubeconfig,
    pki,
    authn,
    api,
    server,
    loopback,
    store,
    log,
  };
  return handleFor({ ...handle, eventTtl });
}

/**
 * The verbs and their guards: authentication, RBAC with escalation prevention, ClusterIP allocation, validating
 * admission policies.
 */
function assemble(
  opts: ApiServerOptions,
  store: Store,
  pki: Pki,
  plan: AddressPlan,
  log: Logger,
): { core: Core; authn: Authenticator; authz: Authorizer } {
  const registry = new ResourceRegistry();
  const authz = new Authorizer(store);
  const policies = new ValidatingAdmission(store, registry, (user, a) => authz.allowed(user, a), log);
  const authn = new Authenticator({
    saKeyPem: pki.saKeyPem,
    saPubPem: pki.saPubPem,
    adminToken: pki.adminToken,
    lookupServiceAccount: (ns, name) => {
      const sa = store.get('core/serviceaccounts', `${ns}/${name}`);
      return sa ? { uid: sa.metadata.uid! } : undefined;
    },
    apiAudiences: opts.apiAudiences,
    lookupPod: (ns, name) => {
      const p = store.get('core/pods', `${ns}/${name}`);
      // A terminating pod's token stays valid until the pod is gone, as in Kubernetes.
      return p ? { uid: p.metadata.uid! } : undefined;
    },
  });
  const escalation = new EscalationCheck(authz);
  const core = new Core(store, registry, {
    allocateClusterIp: (svc) => allocateClusterIp(store, plan, svc),
    admitWrite: ({ rt, obj, old, opts, requestName }) => {
      if (rt.builtin && rt.group === 'rbac.authorization.k8s.io')
        escalation.check({ resource: rt.plural, obj, old, user: opts.user, requestName });
    },
    validatingAdmission: (req, warnings) => policies.admit(req, warnings),
    afterWrite: (rt, obj) => {
      if (rt.builtin && rt.plural === 'validatingadmissionpolicies') policies.writeStatus(obj);
    },
  });
  return { core, authn, authz };
}

/** The running server's handle (ApiServerHandle). */
function handleFor(p: {
  opts: ApiServerOptions;
  url: string;
  host: string;
  port: number;
  kubeconfigPath: string;
  pki: Pki;
  authn: Authenticator;
  api: HttpApi;
  server: https.Server;
  loopback: Loopback | undefined;
  store: Store;
  log: Logger;
  eventTtl: EventTtl;
}): ApiServerHandle {
  const { opts, url, pki, authn, api, server, loopback, store, log } = p;
  let stopped = false;
  // The lab process's own clients over the loopback socket when there is one, else HTTPS like everyone else.
  const own = loopback
    ? { server: 'http://localhost', connector: unixSocketConnector(loopback.path) }
    : { server: url, connector: sharedTlsConnector(pki.caPem) };
  return {
    url,
    host: p.host,
    port: p.port,
    kubeconfigPath: p.kubeconfigPath,
    caPem: pki.caPem,
    adminToken: pki.adminToken,
    issueServiceAccountToken: (ns, sa, o) => authn.issueServiceAccountToken(ns, sa, o).token,
    issuePrivilegedToken: (user) => authn.issuePrivilegedToken(user),
    credentials: (o = {}) => ({
      server: own.server,
      caPem: pki.caPem,
      token: o.user ? authn.issuePrivilegedToken(o.user) : pki.adminToken,
      connector: own.connector,
    }),
    kubeConfig: async (o = {}) => {
      const { KubeConfig } = await import('@kubernetes/client-node');
      const kc = new KubeConfig();
      const token = o.user ? authn.issuePrivilegedToken(o.user) : pki.adminToken;
      const ctx = `gwlab-${opts.labName}`;
      kc.loadFromOptions({
        clusters: [{ name: ctx, server: url, caData: Buffer.from(pki.caPem).toString('base64'), skipTLSVerify: false }],
        users: [{ name: o.user ?? `${ctx}-admin`, token }],
        contexts: [{ name: ctx, cluster: ctx, user: o.user ?? `${ctx}-admin`, namespace: 'default' }],
        currentContext: ctx,
      });
      return kc;
    },
    registerSubresource: (resource, sub, handler) => api.registerSubresource(resource, sub, handler),
    revision: () => store.revision(),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      p.eventTtl.stop();
      api.close();
      await Promise.all(
        [server, loopback?.server].map(
          (srv) =>
            srv &&
            new Promise<void>((resolve) => {
              srv.close(() => resolve());
              srv.closeIdleConnections();
              setTimeout(() => srv.closeAllConnections(), 200).unref();
            }),
        ),
      );
      if (loopback) rmSync(loopback.path, { force: true });
      store.close();
      log.info('API server stopped', { url });
    },
  };
}

/** `server` answering with the API (its HTTPS port and its loopback socket alike). */
function serving<S extends http.Server | https.Server>(server: S, api: HttpApi, log: Logger): S {
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.on('request', (req, res) => {
    api.onRequest(req, res).catch((e) => log.error('request failed', { err: e as Error }));
  });
  server.on('upgrade', (req, socket, head) => {
    api.onUpgrade(req, socket, head).catch((e) => log.error('upgrade failed', { err: e as Error }));
  });
  setupConnections(server, log);
  return server;
}

/** The API server's plain-HTTP Unix socket for the lab process's own clients (credentials()). */
interface Loopback {
  server: http.Server;
  path: string;
}

/**
 * Serves the same handler on a Unix socket (owner-only, in the lab's store folder) for the clients in this process:
 * the controllers, the node agent and the kubelet talk to their API server as every client does (HTTP, bearer
 * tokens, authorization, admission, watch), but without TLS, which made them encrypt and decrypt every byte twice in
 * one process. A path too long for a socket, or a listen error, leaves them on HTTPS.
 */
async function listenLoopback(api: HttpApi, path: string, log: Logger): Promise<Loopback | undefined> {
  if (Buffer.byteLength(path) > 100) return undefined;
  const server = serving(http.createServer({ keepAliveTimeout: 120_000 }), api, log);
  rmSync(path, { force: true });
  try {
    await listen(server, { path });
    chmodSync(path, 0o600);
  } catch (err) {
    log.warn("no loopback socket: the lab process's clients use HTTPS", { path, err: err as Error });
    return undefined;
  }
  return { server, path };
}

/** server.listen(to), resolved once listening, rejected with the bind error (the HTTPS port, the loopback socket). */
function listen(
  server: http.Server | https.Server,
  to: { host: string; port: number } | { path: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => {
      server.off('listening', onListening);
      reject(e);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(to);
  });
}

const systemWrite = {
  dryRun: false,
  fieldManager: 'kube-apiserver',
  fieldValidation: 'Strict' as const,
  warnings: [],
  defaultManager: 'kube-apiserver',
};

/** What every cluster has: system namespaces, default RBAC, the `kubernetes` Service and its endpoints. */
function bootstrap(core: Core, store: Store, kubernetesIp: string, port: number): void {
  const reg = core.registry;
  const ensure = (resource: string, group: string, obj: K8sObject, update = false) => {
    const rt = reg.get(group, group ? 'v1' : 'v1', resource)!;
    const existing = store.get(rt.bucket, core.key(rt, obj.metadata.namespace, obj.metadata.name!));
    try {
      if (!existing) core.create(rt, obj.metadata.namespace, obj, { ...systemWrite, warnings: [] });
      else if (update) {
        const next = { ...structuredClone(existing), ...structuredClone(obj), metadata: { ...existing.metadata } };
        core.update(rt, obj.metadata.namespace, obj.metadata.name!, next, { ...systemWrite, warnings: [] });
      }
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 409)) throw e;
    }
  };
  for (const ns of SYSTEM_NAMESPACES)
    ensure('namespaces', '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (const o of bootstrapPolicy())
    ensure(o.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings', 'rbac.authorization.k8s.io', o, true);
  ensure(
    'services',
    '',
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { component: 'apiserver', provider: 'kubernetes' },
      },
      spec: {
        type: 'ClusterIP',
        clusterIP: kubernetesIp,
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }],
        sessionAffinity: 'None',
      },
    },
    true,
  );
  ensure(
    'endpoints',
    '',
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
      },
      subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port, protocol: 'TCP' }] }],
    },
    true,
  );
  ensure(
    'endpointslices',
    'discovery.k8s.io',
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: {
          'kubernetes.io/service-name': 'kubernetes',
          'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io',
        },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    },
    true,
  );
}

/** Next free ClusterIP in 127.<serviceOctet>.1.1 … 127.<serviceOctet>.255.254 (127.<serviceOctet>.0.x is for fixed IPs). */
function allocateClusterIp(store: Store, plan: AddressPlan, _svc: K8sObject): string | undefined {
  const used = new Set<string>();
  for (const s of store.list('core/services')) if (s.spec?.clusterIP) used.add(s.spec.clusterIP);
  for (let x = 1; x < 256; x++) {
    for (let y = 1; y < 255; y++) {
      const ip = `127.${plan.serviceOctet}.${x}.${y}`;
      if (!used.has(ip)) return ip;
    }
  }
  return undefined;
}
