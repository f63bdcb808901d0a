// Typed helpers over @kubernetes/client-node that work on every backend: connect, server-side apply of YAML, reads,
// deletes, and waits on conditions (with the observedGeneration check kubectl wait makes). Every request of a Kube
// reuses kept-alive connections and skips fetch()'s layer (system/controlplane/kube/transport.ts: client-node alone
// opens a new TLS connection per request).
import {
  CoreV1Api,
  HttpMethod,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  type ResponseContext,
  Watch,
} from '@kubernetes/client-node';
// Not re-exported by the package's index, but the very module its dumpYaml and API classes serialize with.
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import { parseAllDocuments } from 'yaml';
import { withTransport } from '../../system/controlplane/kube/transport.ts';
import { httpStatusOf } from '../../system/shared/kube/list-watch.ts';
import { type WaitOptions, waitFor } from './wait.ts';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export type KObj = KubernetesObject & { spec?: any; status?: any; [k: string]: any };

export const FIELD_MANAGER = 'gwlab';

export function parseYamlDocs(text: string): KObj[] {
  const docs: KObj[] = [];
  for (const d of parseAllDocuments(text)) {
    if (d.errors.length) throw new Error(`invalid YAML: ${d.errors[0].message}`);
    const v = d.toJS();
    if (v && typeof v === 'object') {
      if (v.kind === 'List' && Array.isArray(v.items)) docs.push(...v.items);
      else docs.push(v);
    }
  }
  return docs;
}

// client-node's typed serializer knows a CRD schema's x-kubernetes-* keys only by its model's names
// (x_kubernetes_preserve_unknown_fields, ...): a plain CRD object would lose them all on the way out (its status then
// pruned to {}), and reads come back under the model's names. Applies therefore go out and come back as plain JSON
// (ObjectApi.applyPlain, as kubectl sends them), and so does getCrd (one request, no discovery first: lab:up reads
// the cluster's Gateway API CRDs with it before changing anything). get() of a CRD comes back through the serializer
// its dumpYaml uses, without dumpYaml's YAML text, which cost ~80 ms per CRD to print and parse back on a loaded
// machine (issue 14): the same plain object (dates as RFC 3339 strings); the JSON copy drops undefined keys.
function fromClientModel(o: KObj): KObj {
  return o?.kind === 'CustomResourceDefinition'
    ? (JSON.parse(JSON.stringify(ObjectSerializer.serialize(o, 'V1CustomResourceDefinition'))) as KObj)
    : o;
}

/** `apiextensions CRDs first, then namespaces, then the rest`, so one multi-document apply works in one pass. */
function applyOrder(o: KObj): number {
  if (o.kind === 'CustomResourceDefinition') return 0;
  if (o.kind === 'Namespace') return 1;
  return 2;
}

/** client-node's object API with its discovery lookup (protected there) opened up: which resource serves a kind. */
class ObjectApi extends KubernetesObjectApi {
  /** KubernetesObjectApi.makeApiClient with this class. */
  static of(kc: KubeConfig): ObjectApi {
    const client = kc.makeApiClient(ObjectApi);
    client.setDefaultNamespace(kc);
    return client;
  }

  /** requestPromise's type for an answer read as plain JSON: the library would make any object's metadata a model. */
  static readonly PLAIN = 'gwlab:plain-json';

  protected override async processResponse<T extends KubernetesObject>(
    response: ResponseContext,
    type?: string,
  ): Promise<T> {
    if (type !== ObjectApi.PLAIN || response.httpStatusCode < 200 || response.httpStatusCode > 299)
      return super.processResponse<T>(response, type); // errors: its ApiException, as every other call
    return JSON.parse(await response.body.text()) as T;
  }

  servedResource(apiVersion: string, kind: string) {
    return this.resource(apiVersion, kind);
  }

  /**
   * Server-side apply of a plain object, sent and read back as JSON as kubectl does: patch() would pass it through the
   * generated model of its kind (for a CRD, the x-kubernetes-* keys renamed and back, ~80 ms for the Gateway API
   * bundle's ten CRDs); the same request otherwise (path, content type, fieldManager, force).
   */
  async applyPlain(spec: KObj, fieldManager: string, force: boolean): Promise<KObj> {
    const ctx = this.configuration.baseServer.makeRequestContext(
      await this.specUriPath(spec, 'patch'),
      HttpMethod.PATCH,
    );
    ctx.setHeaderParam('Accept', 'application/json, */*;q=0.8');
    ctx.setHeaderParam('Content-Type', PatchStrategy.ServerSideApply);
    ctx.setQueryParam('fieldManager', fieldManager);
    ctx.setQueryParam('force', String(force));
    ctx.setBody(JSON.stringify(spec));
    return this.requestPromise<KObj>(ctx, ObjectApi.PLAIN);
  }

  /** GET of an object at its API path, read as plain JSON (no discovery request first, no model); 404: undefined. */
  async getPlain(path: string): Promise<KObj | undefined> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, HttpMethod.GET);
    ctx.setHeaderParam('Accept', 'application/json, */*;q=0.8');
    try {
      return await this.requestPromise<KObj>(ctx, ObjectApi.PLAIN);
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }
}

export class Kube {
  readonly kc: KubeConfig;
  readonly objects: ObjectApi;
  readonly core: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.kc = withTransport(kc);
    this.objects = ObjectApi.of(kc);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  static fromFile(kubeconfig: string, context?: string): Kube {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    if (context) kc.setCurrentContext(context);
    return new Kube(kc);
  }

  /** Server-side apply of every document (CRDs and namespaces first; each CRD waited on until Established). */
  async apply(input: string | KObj | KObj[], opts: { namespace?: string; force?: boolean } = {}): Promise<KObj[]> {
    const docs = typeof input === 'string' ? parseYamlDocs(input) : Array.isArray(input) ? input : [input];
    const ordered = docs.map((d, i) => ({ d, i })).sort((a, b) => applyOrder(a.d) - applyOrder(b.d) || a.i - b.i);
    const out: KObj[] = [];
    for (const { d } of ordered) {
      const obj = structuredClone(d);
      if (opts.namespace && !obj.metadata?.namespace && !isClusterScoped(obj.kind)) {
        obj.metadata = { ...obj.metadata, namespace: opts.namespace };
      }
      // managedFields and status are not part of an apply configuration.
      delete obj.metadata?.managedFields;
      const applied = await this.objects.applyPlain(obj, FIELD_MANAGER, opts.force ?? true);
      if (obj.kind === 'CustomResourceDefinition') await this.waitForCrd(obj.metadata!.name!);
      out.push(applied);
    }
    return out;
  }

  /** Whether the cluster serves `kind` at `apiVersion` (its discovery document lists it). */
  async serves(apiVersion: string, kind: string): Promise<boolean> {
    try {
      return !!(await this.objects.servedResource(apiVersion, kind));
    } catch (err) {
      if (statusCode(err) === 404) return false;
      throw err;
    }
  }

  /** A CustomResourceDefinition by name, as plain JSON, in one request. */
  getCrd(name: string): Promise<KObj | undefined> {
    return this.objects.getPlain(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`);
  }

  async get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<KObj | undefined> {
    try {
      return fromClientModel((await this.objects.read({ apiVersion, kind, metadata: { name, namespace } })) as KObj);
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }

  async list(apiVersion: string, kind: string, namespace?: string, labelSelector?: string): Promise<KObj[]> {
    const l = await this.objects.list(
      apiVersion,
      kind,
      namespace,
      undefined,
      undefined,
      undefined,
      undefined,
      labelSelector,
    );
    return (l.items as KObj[]).map((o) => fromClientModel({ apiVersion, kind, ...o }));
  }

  /** Deletes the documents (reverse apply order); absent ones are fine. */
  async delete(input: string | KObj | KObj[], opts: { wait?: boolean; timeoutMs?: number } = {}): Promise<void> {
    const docs = typeof input === 'string' ? parseYamlDocs(input) : Array.isArray(input) ? input : [input];
    const ordered = [...docs].sort((a, b) => applyOrder(b) - applyOrder(a));
    for (const d of ordered) {
      try {
        await this.objects.delete(d, undefined, undefined, undefined, undefined, 'Background');
      } catch (err) {
        if (statusCode(err) !== 404) throw err;
      }
    }
    if (opts.wait) {
      for (const d of ordered) {
        await waitFor(
          `${d.kind} ${d.metadata?.namespace ? d.metadata.namespace + '/' : ''}${d.metadata?.name} to be deleted`,
          async () => ({ ok: !(await this.get(d.apiVersion!, d.kind!, d.metadata!.name!, d.metadata?.namespace)) }),
          { timeoutMs: opts.timeoutMs ?? 60_000 },
        );
      }
    }
  }

  async waitForCrd(name: string, opts: WaitOptions = {}): Promise<void> {
    await this.waitForCondition('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name, undefined, 'Established', {
      ...opts,
      checkGeneration: false,
    });
  }

  /**
   * Waits until `status.conditions` (or, for Gateway API route/policy statuses, any `status.parents[]`/`ancestors[]`
   * entry) has `type` with `status`, and — as kubectl wait does — observedGeneration ≥ generation when set.
   */
  async waitForCondition(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    type: string,
    opts: WaitOptions & { status?: string; reason?: string; checkGeneration?: boolean } = {},
  ): Promise<KObj> {
    const want = opts.status ?? 'True';
    return waitFor(
      `${kind} ${namespace ? namespace + '/' : ''}${name} condition ${type}=${want}${opts.reason ? ` (${opts.reason})` : ''}`,
      async () => {
        // A CRD in one plain request (getCrd: no model round trip of its whole schema on every poll).
        const o =
          apiVersion === 'apiextensions.k8s.io/v1' && kind === 'CustomResourceDefinition'
            ? await this.getCrd(name)
            : await this.get(apiVersion, kind, name, namespace);
        if (!o) return { ok: false, seen: 'not found' };
        const conds = allConditions(o);
        const c = conds.find((x) => x.type.toLowerCase() === type.toLowerCase());
        const genOk =
          opts.checkGeneration === false ||
          c?.observedGeneration === undefined ||
          c.observedGeneration >= (o.metadata?.generation ?? 0);
        const ok = !!c && c.status === want && (!opts.reason || c.reason === opts.reason) && genOk;
        return { ok, value: o, seen: conds.length ? conds : (o.status ?? 'no status') };
      },
      { timeoutMs: opts.timeoutMs ?? 60_000, intervalMs: opts.intervalMs ?? 200 },
    );
  }

  /**
   * Waits for a Deployment to be rolled out (the checks of `kubectl rollout status`), checking again on every change
   * a watch of it reports (as kubectl rollout status watches) as well as every `intervalMs`.
   */
  async waitForRollout(name: string, namespace: string, opts: WaitOptions = {}): Promise<KObj> {
    const changes = (notify: () => void) =>
      this.watchObject(`/apis/apps/v1/namespaces/${namespace}/deployments`, name, notify);
    return waitFor(
      `deployment ${namespace}/${name} rollout`,
      async () => {
        const d = await this.get('apps/v1', 'Deployment', name, namespace);
        if (!d) return { ok: false, seen: 'not found' };
        const s = d.status ?? {};
        const want = d.spec?.replicas ?? 1;
        const ok =
          (d.metadata?.generation ?? 0) <= (s.observedGeneration ?? 0) &&
          (s.updatedReplicas ?? 0) >= want &&
          (s.replicas ?? 0) <= (s.updatedReplicas ?? 0) &&
          (s.availableReplicas ?? 0) >= (s.updatedReplicas ?? 0);
        return { ok, value: d, seen: s };
      },
      { timeoutMs: opts.timeoutMs ?? 90_000, intervalMs: opts.intervalMs ?? 200, changes },
    );
  }

  /**
   * Calls `onChange` on every watch event of the object `name` in the collection at `path`; returns the function
   * that stops the watch. A watch that fails or ends just stops notifying: the waits that use it poll as well.
   */
  watchObject(path: string, name: string, onChange: () => void): () => void {
    let stopped = false;
    let ctrl: AbortController | undefined;
    new Watch(this.kc)
      .watch(
        path,
        { fieldSelector: `metadata.name=${name}` },
        () => onChange(),
        () => {},
      )
      .then((c) => {
        ctrl = c;
        if (stopped) c.abort();
      })
      .catch(() => {});
    return () => {
      stopped = true;
      ctrl?.abort();
    };
  }
}

export function allConditions(o: KObj): Condition[] {
  const s = o.status ?? {};
  const out: Condition[] = [...(s.conditions ?? [])];
  for (const p of s.parents ?? []) out.push(...(p.conditions ?? []));
  for (const a of s.ancestors ?? []) out.push(...(a.conditions ?? []));
  return out;
}

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'Node',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'GatewayClass',
  'PersistentVolume',
  'StorageClass',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

export function isClusterScoped(kind: string | undefined): boolean {
  return !!kind && CLUSTER_SCOPED.has(kind);
}

/** The HTTP status of a failed client-node call (the list-watch loop's reading of it, one rule). */
export const statusCode = httpStatusOf;
