// ListenerSets (v1 in Gateway API v1.6.1, GEP-1713; apis/v1/listenerset_types.go) → the listeners they add to their
// parent Gateway, and each set's report. A set attaches only when the Gateway's `spec.allowedListeners.namespaces`
// selects its namespace (`from`: None by default, Same, All, Selector); the merged list is the Gateway's own listeners,
// then the sets oldest first, then by namespace/name. Statuses follow the conformance tests at v1.6.1
// (listenerset-default-not-allowed: Accepted/Programmed False NotAllowed; listenerset-hostname-conflict: a set whose
// every listener is conflicted is Accepted/Programmed False ListenersNotValid).
import { type Gateway, type ListenerSet, matchesLabels, type Namespace, olderFirst } from '../model.ts';
import type { ListenerOwner, ListenerReport, ListenerState } from './listeners.ts';
import { bad, type ObjRef, type Outcome, ok } from './types.ts';

export interface AdmittedSet {
  owner: ListenerOwner;
  set: ListenerSet;
  listeners: NonNullable<ListenerSet['spec']>['listeners'] & {};
}

export interface ListenerSetReport {
  ref: ObjRef;
  generation: number;
  accepted: Outcome;
  programmed: Outcome;
  listeners: ListenerReport[];
}

/** The sets naming the Gateway, split into those its allowedListeners admit (in precedence order) and the others. */
export function admitListenerSets(
  gw: Gateway,
  sets: ListenerSet[],
  namespace: (name: string) => Namespace | undefined,
): { admitted: AdmittedSet[]; refused: ListenerSet[] } {
  const admitted: AdmittedSet[] = [];
  const refused: ListenerSet[] = [];
  for (const set of [...sets].sort(olderFirst)) {
    const ns = set.metadata.namespace ?? 'default';
    if (!allowed(gw, ns, namespace)) {
      refused.push(set);
      continue;
    }
    admitted.push({
      owner: { kind: 'ListenerSet', namespace: ns, name: set.metadata.name },
      set,
      listeners: set.spec?.listeners ?? [],
    });
  }
  return { admitted, refused };
}

function allowed(gw: Gateway, setNs: string, namespace: (name: string) => Namespace | undefined): boolean {
  const n = gw.spec?.allowedListeners?.namespaces;
  const from = n?.from ?? 'None';
  if (from === 'All') return true;
  if (from === 'Same') return setNs === (gw.metadata.namespace ?? 'default');
  if (from === 'Selector') {
    const o = namespace(setNs);
    return !!o && !!n?.selector && matchesLabels(o.metadata.labels, n.selector);
  }
  return false;
}

/** Each set's report: Accepted and Programmed (before the proxy's state is known) and its listeners' reports. */
export function listenerSetReports(
  gw: Gateway,
  gatewayAccepted: Outcome,
  sets: { admitted: AdmittedSet[]; refused: ListenerSet[] },
  listeners: ListenerState[],
): Record<string, ListenerSetReport> {
  const out: Record<string, ListenerSetReport> = {};
  const gwKey = `${gw.metadata.namespace ?? 'default'}/${gw.metadata.name}`;
  const refOf = (s: ListenerSet): ObjRef => ({
    kind: 'ListenerSet',
    namespace: s.metadata.namespace ?? 'default',
    name: s.metadata.name,
  });
  for (const s of sets.refused) {
    const why = bad(
      'NotAllowed',
      `Gateway ${gwKey} does not allow ListenerSets from namespace ${refOf(s).namespace} (spec.allowedListeners)`,
    );
    out[key(refOf(s))] = {
      ref: refOf(s),
      generation: s.metadata.generation ?? 1,
      accepted: why,
      programmed: why,
      listeners: [],
    };
  }
  for (const a of sets.admitted) {
    const ref = refOf(a.set);
    const mine = listeners.filter(
      (l) => l.owner.namespace === ref.namespace && l.owner.name === ref.name && l.owner.kind === 'ListenerSet',
    );
    let accepted = ok('Accepted', 'listener set accepted');
    let programmed = ok('Programmed', 'listener set programmed');
    if (!gatewayAccepted.ok) {
      accepted = bad('ParentNotAccepted', `Gateway ${gwKey} is not accepted: ${gatewayAccepted.message}`);
      programmed = accepted;
    } else if (!mine.some((l) => l.usable)) {
      accepted = bad(
        'ListenersNotValid',
        `no listener is valid: ${mine.map((l) => `${l.l.name}: ${l.report.programmed.message}`).join('; ')}`,
      );
      programmed = accepted;
    }
    out[key(ref)] = {
      ref,
      generation: a.set.metadata.generation ?? 1,
      accepted,
      programmed,
      listeners: mine.map((l) => l.report),
    };
  }
  return out;
}

const key = (r: ObjRef) => `${r.namespace}/${r.name}`;
