// The cluster DNS server (kube-dns role): a real DNS server on UDP, on an address of the lab's service range
// (127.<serviceOctet>.0.10, port 53, or 8053 when 53 cannot be bound), answering from a table the lab keeps current:
//   <svc>.<ns>.svc.<domain>                    A     ClusterIP, or the ready pod IPs of a headless Service
//   _<port>._<proto>.<svc>.<ns>.svc.<domain>   SRV   the Service port, target <svc>.<ns>.svc.<domain>
//   <a-b-c-d>.<ns>.pod.<domain>                A     a.b.c.d
//   <d>.<c>.<b>.<a>.in-addr.arpa               PTR   the Service owning ClusterIP a.b.c.d
// Other types for existing names answer NOERROR with no records (and the SOA), unknown names NXDOMAIN, names outside
// the cluster domain REFUSED (it does not recurse: the pod hook sends only cluster names here).
import dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import dnsPacket, { type Answer, type Question } from 'dns-packet';

export interface DnsServicePort {
  name?: string;
  port: number;
  protocol?: string;
}

export interface DnsService {
  namespace: string;
  name: string;
  /** ClusterIP, or null/'None' for a headless Service. */
  clusterIP?: string | null;
  /** Ready endpoint IPs: the answers for a headless Service. */
  endpoints?: string[];
  ports?: DnsServicePort[];
}

export interface ClusterDnsOptions {
  /** An address of the lab's service range, e.g. 127.<serviceOctet>.0.10. */
  address: string;
  /** Default 53. */
  port?: number;
  /** Used when `port` cannot be bound (no privilege): default port + 8000, the lab's low-port rule. */
  fallbackPort?: number;
  /** Bind the fallback port directly (what an unprivileged lab does, and what tests force). */
  forceFallback?: boolean;
  clusterDomain?: string;
  /** TTL of positive answers in seconds (default 5: Services change under tests). */
  ttl?: number;
  log?: { debug(msg: string, f?: object): void; warn(msg: string, f?: object): void };
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

export interface DnsAnswer {
  rcode: keyof typeof RCODE;
  answers: Answer[];
}

export class ClusterDns extends EventEmitter {
  readonly clusterDomain: string;
  private readonly opts: ClusterDnsOptions;
  private readonly services = new Map<string, DnsService>();
  private socket?: dgram.Socket;
  private bound?: { address: string; port: number; fallback: boolean };

  constructor(opts: ClusterDnsOptions) {
    super();
    this.opts = opts;
    this.clusterDomain = (opts.clusterDomain ?? 'cluster.local').toLowerCase();
  }

  /** Where the server listens (after start). */
  get endpoint(): { address: string; port: number; fallback: boolean } {
    if (!this.bound) throw new Error('ClusterDns: not started');
    return this.bound;
  }

  async start(): Promise<{ address: string; port: number; fallback: boolean }> {
    const port = this.opts.port ?? 53;
    const fallbackPort = this.opts.fallbackPort ?? port + 8000;
    if (!this.opts.forceFallback) {
      try {
        return await this.bind(port, false);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'EACCES' && code !== 'EPERM') throw err;
        this.opts.log?.warn('cannot bind the DNS port, using the fallback', { port, fallbackPort, code });
      }
    }
    return this.bind(fallbackPort, true);
  }

  private bind(port: number, fallback: boolean): Promise<{ address: string; port: number; fallback: boolean }> {
    const sock = dgram.createSocket({ type: 'udp4' });
    return new Promise((resolve, reject) => {
      sock.once('error', reject);
      sock.bind({ address: this.opts.address, port, exclusive: true }, () => {
        sock.off('error', reject);
        sock.on('error', (err) => this.opts.log?.warn('dns socket error', { err: String(err) }));
        sock.on('message', (msg, rinfo) => this.onMessage(msg, rinfo));
        this.socket = sock;
        this.bound = { address: this.opts.address, port: sock.address().port, fallback };
        resolve(this.bound);
      });
    });
  }

  async stop(): Promise<void> {
    const s = this.socket;
    this.socket = undefined;
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  upsertService(svc: DnsService): void {
    this.services.set(`${svc.namespace}/${svc.name}`, svc);
  }

  removeService(namespace: string, name: string): void {
    this.services.delete(`${namespace}/${name}`);
  }

  /** Replaces the whole table. */
  setServices(list: DnsService[]): void {
    this.services.clear();
    for (const s of list) this.upsertService(s);
  }

  private onMessage(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return; // not DNS: drop, as servers do
    }
    const q = query.questions?.[0];
    const res = q ? this.answer(q) : { rcode: 'NOTIMP' as const, answers: [] };
    const soa = this.soa();
    const flags =
      dnsPacket.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | RCODE[res.rcode];
    const out = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: flags & ~dnsPacket.RECURSION_AVAILABLE,
      questions: query.questions,
      answers: res.answers,
      authorities: res.answers.length === 0 && res.rcode !== 'REFUSED' ? [soa] : [],
    });
    this.opts.log?.debug('dns query', { name: q?.name, type: q?.type, rcode: res.rcode, n: res.answers.length });
    this.socket?.send(out, rinfo.port, rinfo.address);
  }

  private soa(): Answer {
    return {
      type: 'SOA',
      name: this.clusterDomain,
      ttl: this.ttl,
      data: {
        mname: `ns.dns.${this.clusterDomain}`,
        rname: `hostmaster.${this.clusterDomain}`,
        serial: 1,
        refresh: 7200,
        retry: 1800,
        expire: 86400,
        minimum: this.ttl,
      },
    } as Answer;
  }

  private get ttl(): number {
    return this.opts.ttl ?? 5;
  }

  /** The answer for one question, from the current table. Exposed for tests and `explain` tools. */
  answer(q: Question): DnsAnswer {
    const name = q.name.toLowerCase().replace(/\.$/, '');
    const type = q.type as string;
    const dom = this.clusterDomain;
    const ttl = this.ttl;
    if (name.endsWith('.in-addr.arpa')) return this.reverse(name, type);
    if (name !== dom && !name.endsWith('.' + dom)) return { rcode: 'REFUSED', answers: [] };
    const labels = name === dom ? [] : name.slice(0, -(dom.length + 1)).split('.');
    const nodata: DnsAnswer = { rcode: 'NOERROR', answers: [] };
    const nx: DnsAnswer = { rcode: 'NXDOMAIN', answers: [] };

    // <svc>.<ns>.svc and its parents
    if (labels[labels.length - 1] === 'svc') {
      if (labels.length === 1) return nodata;
      const ns = labels[labels.length - 2];
      if (labels.length === 2) return [...this.services.values()].some((s) => s.namespace === ns) ? nodata : nx;
      const svc = this.services.get(`${ns}/${labels[labels.length - 3]}`);
      if (!svc) return nx;
      if (labels.length === 3) {
        if (type !== 'A' && type !== 'ANY') return nodata;
        const headless = !svc.clusterIP || svc.clusterIP === 'None';
        const ips = headless ? (svc.endpoints ?? []) : [svc.clusterIP as string];
        return { rcode: 'NOERROR', answers: ips.map((ip) => ({ type: 'A', name, ttl, data: ip }) as Answer) };
      }
      if (labels.length === 5 && labels[0].startsWith('_') && labels[1].startsWith('_')) {
        const portName = labels[0].slice(1);
        const proto = labels[1].slice(1).toUpperCase();
        const port = (svc.ports ?? []).find(
          (p) => (p.name ?? '').toLowerCase() === portName && (p.protocol ?? 'TCP').toUpperCase() === proto,
        );
        if (!port) return nx;
        if (type !== 'SRV' && type !== 'ANY') return nodata;
        const target = `${svc.name}.${svc.namespace}.svc.${dom}`;
        return {
          rcode: 'NOERROR',
          answers: [{ type: 'SRV', name, ttl, data: { priority: 0, weight: 100, port: port.port, target } } as Answer],
        };
      }
      return nx;
    }
    // <a-b-c-d>.<ns>.pod
    if (labels[labels.length - 1] === 'pod') {
      if (labels.length === 1 || labels.length === 2) return nodata;
      const m = labels.length === 3 ? /^(\d+)-(\d+)-(\d+)-(\d+)$/.exec(labels[0]) : null;
      if (!m || m.slice(1).some((o) => Number(o) > 255)) return nx;
      if (type !== 'A' && type !== 'ANY') return nodata;
      return { rcode: 'NOERROR', answers: [{ type: 'A', name, ttl, data: m.slice(1).join('.') } as Answer] };
    }
    return labels.length === 0 ? nodata : nx;
  }

  private reverse(name: string, type: string): DnsAnswer {
    const octets = name.slice(0, -'.in-addr.arpa'.length).split('.');
    if (octets.length !== 4) return { rcode: 'NXDOMAIN', answers: [] };
    const ip = octets.reverse().join('.');
    const svc = [...this.services.values()].find((s) => s.clusterIP === ip);
    if (!svc) return { rcode: 'NXDOMAIN', answers: [] };
    if (type !== 'PTR' && type !== 'ANY') return { rcode: 'NOERROR', answers: [] };
    const data = `${svc.name}.${svc.namespace}.svc.${this.clusterDomain}`;
    return { rcode: 'NOERROR', answers: [{ type: 'PTR', name, ttl: this.ttl, data } as Answer] };
  }
}
