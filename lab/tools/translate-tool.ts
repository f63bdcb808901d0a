// `npm run translate`: Gateway API and policy manifests → per-Gateway IR, xDS and statuses, offline, through the
// control plane's own pipeline (system/controlplane/offline.ts). The xDS resources go through the same Any
// encoding and decoding as /snapshots/xds, so the two can be compared field for field.

import { stringify } from 'yaml';
import type { GatewayIR, ValidationMode } from '../../system/controlplane/ir/types.ts';
import { type KObject, policyExtensionRefs, type TrafficPolicySpec } from '../../system/controlplane/model.ts';
import { translateObjects } from '../../system/controlplane/offline.ts';
import { packAny, unpackAny } from '../../system/shared/envoy/protojson.ts';
import { redactSecrets } from '../../system/shared/envoy/redact.ts';
import { selectReadable } from './translate-tool-input.ts';

export const XDS_TYPES = ['listeners', 'routes', 'clusters', 'endpoints'] as const;
export type XdsType = (typeof XDS_TYPES)[number];
export type XdsResources = Record<XdsType, Record<string, unknown>[]>;

export const SECTIONS = ['ir', 'xds', 'status'] as const;
export type Section = (typeof SECTIONS)[number];

export interface TranslateOptions {
  validation?: ValidationMode;
  /** `<ns>/<name>`: only that Gateway, and only the statuses of resources that name it. */
  gateway?: string;
}

export interface TranslateOutput {
  /** Gateway `<ns>/<name>` → its IR. */
  ir: Record<string, GatewayIR>;
  /** Proxy role (`gwvendor-kube-gateway-api~<ns>~<gw>`, the key of /snapshots/xds) → its resources. */
  xds: Record<string, XdsResources>;
  /** `<resource>/<ns>/<name>` → the status the control plane writes (lastTransitionTime is the writer's). */
  status: Record<string, Record<string, unknown>>;
  /** Skipped inputs and other things worth saying, for stderr. */
  notes: string[];
}

/** A resource as /snapshots/xds shows it: encoded into the Any the proxy receives, then decoded. */
function asSent(r: unknown): Record<string, unknown> {
  const any = packAny(r);
  return unpackAny(any);
}

type StatusEntry = Record<string, unknown> & {
  parents?: { parentRef?: { namespace?: string; name?: string } }[];
  ancestors?: { ancestorRef?: { namespace?: string; name?: string } }[];
};

/** Whether a status concerns Gateway `gw` (`ns/name`): its own, its class's, and those of resources that name it. */
function concerns(key: string, st: StatusEntry, gw: string, gwClass: string | undefined): boolean {
  const [resource, ns] = key.split('/');
  if (resource === 'gateways') return key === `gateways/${gw}`;
  if (resource === 'gatewayclasses') return key === `gatewayclasses/${gwClass}`;
  if (resource === 'httproutes')
    return (st.parents ?? []).some((p) => `${p.parentRef?.namespace ?? ns}/${p.parentRef?.name}` === gw);
  if (resource === 'trafficpolicies' || resource === 'listenerpolicies' || resource === 'backendconfigpolicies')
    return (st.ancestors ?? []).some((a) => `${a.ancestorRef?.namespace ?? ns}/${a.ancestorRef?.name}` === gw);
  return false;
}

/** Extensions that a kept policy refers to (extAuth, rateLimit.global, extProc: model.ts policyExtensionRefs). */
function extensionsOf(objects: KObject[], policyKeys: string[]): Set<string> {
  const out = new Set<string>();
  for (const o of objects) {
    if (o.kind !== 'TrafficPolicy') continue;
    const ns = o.metadata.namespace ?? 'default';
    if (!policyKeys.includes(`trafficpolicies/${ns}/${o.metadata.name}`)) continue;
    for (const r of policyExtensionRefs(o.spec as TrafficPolicySpec | undefined)) {
      out.add(`gatewayextensions/${ns}/${r.name}`);
    }
  }
  return out;
}

function gatewayNote(objects: KObject[], key: string, ir: Record<string, GatewayIR>): string | undefined {
  const gw = objects.find(
    (o) => o.kind === 'Gateway' && `${o.metadata.namespace ?? 'default'}/${o.metadata.name}` === key,
  );
  if (!gw) return undefined;
  if (ir[key]) return undefined;
  const cls = (gw.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName;
  return `Gateway ${key} (class ${cls ?? 'none'}) produced no configuration: its class is not handled by gwvendor, or it is not accepted (see its status)`;
}

/** Translates objects (already parsed) as the control plane would, after narrowing them to what it reads. */
export function translate(input: { object: KObject; where: string }[], opts: TranslateOptions = {}): TranslateOutput {
  const { objects, notes } = selectReadable(input);
  const r = translateObjects(objects, { mode: opts.validation ?? 'strict' });
  const gateways = objects
    .filter((o) => o.kind === 'Gateway')
    .map((o) => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`);
  for (const g of gateways) {
    const n = gatewayNote(objects, g, r.ir);
    if (n) notes.push(n);
  }
  if (!gateways.length) notes.push('the input holds no Gateway: there is no IR or xDS to show, only statuses');

  const xds: TranslateOutput['xds'] = {};
  for (const [role, res] of Object.entries(r.xds)) {
    xds[role] = {
      listeners: res.listeners.map(asSent),
      routes: res.routes.map(asSent),
      clusters: res.clusters.map(asSent),
      endpoints: res.endpoints.map(asSent),
    };
  }
  // Private keys never leave in the output (a bug report carries it): redacted as the control plane's own dumps and
  // Envoy's config_dump redact them (system/shared/envoy/redact.ts).
  const out: TranslateOutput = { ir: redactSecrets(r.ir), xds: redactSecrets(xds), status: r.status, notes };
  if (!opts.gateway) return out;

  const gw = opts.gateway;
  if (!/^[^/]+\/[^/]+$/.test(gw)) throw new Error(`--gateway ${gw}: give it as <namespace>/<name>`);
  if (!gateways.includes(gw)) {
    throw new Error(`--gateway ${gw}: no such Gateway in the input (Gateways: ${gateways.join(', ') || 'none'})`);
  }
  const ir = r.ir[gw];
  const gwObj = objects.find(
    (o) => o.kind === 'Gateway' && `${o.metadata.namespace ?? 'default'}/${o.metadata.name}` === gw,
  );
  const gwClass = (gwObj?.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName;
  const status: TranslateOutput['status'] = {};
  for (const [k, v] of Object.entries(r.status)) if (concerns(k, v as StatusEntry, gw, gwClass)) status[k] = v;
  for (const k of extensionsOf(objects, Object.keys(status))) if (r.status[k]) status[k] = r.status[k];
  const left = Object.keys(r.status).length - Object.keys(status).length;
  if (left) notes.push(`--gateway ${gw}: ${left} status(es) of resources that do not name it are left out`);
  return {
    ir: ir ? { [gw]: ir } : {},
    xds: ir && xds[ir.role] ? { [ir.role]: xds[ir.role] } : {},
    status,
    notes,
  };
}

export interface RenderOptions {
  output?: 'yaml' | 'json';
  only?: Section;
  /** Summary lines for the YAML header (what was read, the validation mode). */
  header?: string[];
}

/** The output without its notes: all three sections, or the one `only` names, as YAML (default) or JSON. */
export function renderTranslation(out: TranslateOutput, opts: RenderOptions = {}): string {
  const body = opts.only ? out[opts.only] : { ir: out.ir, xds: out.xds, status: out.status };
  if (opts.output === 'json') return `${JSON.stringify(body, null, 2)}\n`;
  const header = (opts.header ?? []).map((l) => `# ${l}\n`).join('');
  return header + stringify(body, { lineWidth: 0, aliasDuplicateObjects: false });
}
