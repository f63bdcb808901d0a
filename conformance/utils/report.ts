// The ConformanceReport (apiVersion gateway.networking.k8s.io/v1, Gateway API v1.6.1 conformance/apis/v1 and
// conformance/utils/suite/reports.go): per profile, core and extended results with statistics {Passed, Skipped,
// Failed}, failedTests and skippedTests, the extended supported and unsupported features, and the summary line upstream
// builds. A test belongs to every profile whose features hold all of its own; it is extended in a profile when one of
// its features is not core there. One deliberate difference, which the brief of issue 18 asks for: a test skipped
// because gwlab does not support a feature is counted as Skipped and listed in skippedTests (upstream leaves such a
// NOT_SUPPORTED test out of the statistics), so the report cannot look better than the run was. For the same reason
// every upstream test of a profile that has no port yet (upstream-tests.json, indexed from the tag by
// `npm run index:gateway-api-conformance`) is counted as Skipped and named in the profile's summary as not ported.
import { stringify } from 'yaml';
import { isExtended, type Profile, profilesOf, SUPPORTED } from './features.ts';
import { GATEWAY_API_VERSION } from './suite.ts';
import upstream from './upstream-tests.json' with { type: 'json' };

export interface TestResult {
  shortName: string;
  features: string[];
  provisional?: boolean;
  result: 'passed' | 'failed' | 'skipped';
}

interface Status {
  result: 'success' | 'partial' | 'failure';
  statistics: { Failed: number; Passed: number; Skipped: number };
  skippedTests?: string[];
  failedTests?: string[];
}

interface ProfileReport {
  core: Status;
  extended?: Status & { supportedFeatures?: string[]; unsupportedFeatures?: string[] };
  name: string;
  summary: string;
}

export interface ReportOptions {
  profiles: Profile[];
  supported?: ReadonlySet<string>;
  version: string;
  mode?: string;
  channel?: 'standard' | 'experimental';
  date?: Date;
  /** Upstream tests not ported (unportedTests): counted as skipped, named in each profile's summary. */
  unported?: TestResult[];
  /** The implementation's URL and contacts (upstream's --url/--contact flags; none by default). */
  url?: string;
  contact?: string[];
}

function emptyStatus(): Status {
  return { result: 'success', statistics: { Failed: 0, Passed: 0, Skipped: 0 } };
}

function finish(s: Status): void {
  s.result = s.statistics.Failed > 0 ? 'failure' : s.statistics.Skipped > 0 ? 'partial' : 'success';
}

function summaryOf(s: Status): string {
  if (s.result === 'success') return 'succeeded';
  if (s.result === 'partial') return `partially succeeded with ${s.statistics.Skipped} test skips`;
  return `failed with ${s.statistics.Failed} test failures`;
}

function add(s: Status, r: TestResult): void {
  if (r.result === 'passed') s.statistics.Passed++;
  else if (r.result === 'failed') {
    s.statistics.Failed++;
    s.failedTests = [...(s.failedTests ?? []), r.shortName];
  } else {
    s.statistics.Skipped++;
    s.skippedTests = [...(s.skippedTests ?? []), r.shortName];
  }
}

/** Upstream's tests (at the vendored tag) that no file here ports, as skipped results. */
export function unportedTests(ported: ReadonlySet<string>): TestResult[] {
  return upstream.tests
    .filter((t) => !ported.has(t.shortName))
    .map((t) => ({ shortName: t.shortName, features: t.features, provisional: t.provisional, result: 'skipped' }));
}

export function buildReport(results: TestResult[], o: ReportOptions): Record<string, unknown> {
  const supported = o.supported ?? SUPPORTED;
  const reports = new Map<string, ProfileReport>();
  const notPorted = new Set(o.unported?.map((t) => t.shortName));
  const sorted = [...results, ...(o.unported ?? [])].sort((a, b) => a.shortName.localeCompare(b.shortName));
  for (const r of sorted) {
    for (const p of profilesOf(r.features, o.profiles)) {
      const rep = reports.get(p.name) ?? { name: p.name, summary: '', core: emptyStatus() };
      reports.set(p.name, rep);
      if (!isExtended(p, r.features)) add(rep.core, r);
      else {
        rep.extended = rep.extended ?? emptyStatus();
        add(rep.extended, r);
      }
    }
  }
  const profiles = [...reports.values()].sort((a, b) => a.name.localeCompare(b.name));
  for (const rep of profiles) {
    const p = o.profiles.find((x) => x.name === rep.name)!;
    finish(rep.core);
    let summary = `Core tests ${summaryOf(rep.core)}`;
    if (rep.extended) {
      finish(rep.extended);
      summary += `. Extended tests ${summaryOf(rep.extended)}`;
      const ext = [...p.extended].sort();
      const yes = ext.filter((f) => supported.has(f));
      const no = ext.filter((f) => !supported.has(f));
      if (yes.length) rep.extended.supportedFeatures = yes;
      if (no.length) rep.extended.unsupportedFeatures = no;
    }
    const missing = [...(rep.core.skippedTests ?? []), ...(rep.extended?.skippedTests ?? [])].filter((n) =>
      notPorted.has(n),
    );
    if (missing.length) summary += `. Not ported yet (counted as skipped): ${missing.length}`;
    rep.summary = `${summary}.`;
  }
  const provisional = sorted.filter((r) => r.provisional && r.result === 'passed').map((r) => r.shortName);
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    date: (o.date ?? new Date()).toISOString(),
    gatewayAPIChannel: o.channel ?? 'standard',
    gatewayAPIVersion: GATEWAY_API_VERSION,
    implementation: {
      contact: o.contact ?? [],
      organization: 'gwlab',
      project: 'gwlab',
      url: o.url ?? '',
      version: o.version,
    },
    kind: 'ConformanceReport',
    mode: o.mode ?? 'default',
    profiles,
    ...(provisional.length ? { succeededProvisionalTests: provisional } : {}),
  };
}

export const reportYaml = (report: Record<string, unknown>): string => stringify(report);
