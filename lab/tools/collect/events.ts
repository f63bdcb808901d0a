// The Events of the collected namespaces, oldest first: the full objects (events/<namespace>.yaml) and a table in the
// spirit of `kubectl get events` (events/<namespace>.txt), which is what one reads first.
import type { CoreV1Event } from '@kubernetes/client-node';
import { type EventSummary, summarizeEvent } from '../../toolkit/describe.ts';
import type { KObj } from '../../toolkit/kube.ts';
import { CORE_EVENT } from './inventory.ts';
import { cleaned, yamlDocs } from './resources.ts';
import type { Collector } from './types.ts';

function timeOf(e: EventSummary): number {
  return e.time ? Date.parse(e.time) || 0 : 0;
}

export function eventsTable(events: EventSummary[]): string {
  if (!events.length) return 'no events\n';
  const rows = [['TIME', 'TYPE', 'REASON', 'OBJECT', 'COUNT', 'SOURCE', 'MESSAGE']].concat(
    events.map((e) => [e.time ?? '', e.type, e.reason, e.object, String(e.count), e.source ?? '', e.message]),
  );
  // The message is last and left unpadded: it is long and free-form.
  const widths = rows[0].slice(0, -1).map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i < widths.length ? c.padEnd(widths[i]) : c)).join('  ')).join('\n') + '\n';
}

export const eventsCollector: Collector = {
  name: 'events',
  what: 'Events of each collected namespace, oldest first (YAML and a readable table)',
  async run({ inventory }, out) {
    const listed = await inventory.list(CORE_EVENT);
    const byNs = new Map<string, Array<{ obj: KObj; sum: EventSummary }>>();
    for (const obj of listed?.items ?? []) {
      const ns = obj.metadata?.namespace ?? 'default';
      byNs.set(ns, [...(byNs.get(ns) ?? []), { obj, sum: summarizeEvent(obj as CoreV1Event) }]);
    }
    for (const [ns, events] of byNs) {
      // Times have second precision: within a second the API server's write order (resourceVersion) decides.
      events.sort(
        (a, b) =>
          timeOf(a.sum) - timeOf(b.sum) ||
          Number(a.obj.metadata?.resourceVersion ?? 0) - Number(b.obj.metadata?.resourceVersion ?? 0),
      );
      await out.write(`events/${ns}.yaml`, yamlDocs(events.map((e) => cleaned(e.obj))));
      await out.write(`events/${ns}.txt`, eventsTable(events.map((e) => e.sum)));
    }
    return { notes: [`${listed?.items.length ?? 0} events in ${byNs.size} namespaces`] };
  },
};
