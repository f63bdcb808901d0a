// npm run translate -- -f <file|dir|-> [-f ...] [--validation strict|off] [-o yaml|json] [--gateway <ns>/<name>]
//   [--only ir|xds|status]
// Offline: no cluster is read. The logic is lab/tools/translate-tool.ts (input: translate-tool-input.ts).
import { renderTranslation, SECTIONS, type Section, translate } from '../lab/tools/translate-tool.ts';
import { parseSources, readSources } from '../lab/tools/translate-tool-input.ts';
import { parseFlags, run, usageError } from './cli.ts';

const USAGE = `usage: npm run translate -- -f <file|dir|-> [-f ...] [--validation strict|off] [-o yaml|json]
                             [--gateway <namespace>/<name>] [--only ir|xds|status]

Translates Gateway API and gwvendor policy manifests into what the control plane would produce, offline (no cluster),
with the control plane's own translation code:
  ir      per Gateway (<namespace>/<name>): the intermediate representation
  xds     per proxy role (gwvendor-kube-gateway-api~<ns>~<gateway>, the key of /snapshots/xds): listeners, routes,
          clusters, endpoints, in the proto JSON /snapshots/xds shows
  status  per resource (<resource>/<namespace>/<name>): the status the control plane writes (without lastTransitionTime)

  -f <path>        a file, a directory (read recursively: *.yaml, *.yml, *.json) or - for stdin; repeatable
  --validation     strict (default, as the installed control plane) or off (everything is sent as written)
  -o yaml|json     YAML for reading (default), JSON for tools
  --gateway ns/gw  only that Gateway, and the statuses of the resources that name it
  --only <section> print only ir, xds or status

Kinds the control plane does not read (Deployments without the gateway-name label, Pods, ConfigMaps, ...) are skipped
with a note on stderr. A missing GatewayClass gwvendor is taken from the install manifest. Statuses that depend on the
cluster (Gateway addresses, ready proxies) reflect only the Services, EndpointSlices and proxy Deployments given, and
never carry a proxy's rejection (Programmed=False/Rejected after a NACK): only a running proxy produces one.
Exit 1 on bad input (the message names the file and document), 2 on a usage error.`;

await run(async () => {
  const flags = parseFlags({
    string: ['f', 'validation', 'output', 'gateway', 'only'],
    alias: { o: 'output' },
  });
  const a = flags.args;
  if (a.help) {
    console.log(USAGE);
    return;
  }
  const usage = (why: string) => usageError(USAGE, why);
  const files = ([] as string[]).concat(a.f ?? []);
  if (!files.length) usage('translate needs at least one -f <file|dir|->');
  const validation = (a.validation as string | undefined) ?? 'strict';
  if (validation !== 'strict' && validation !== 'off') usage(`--validation ${validation}: use strict or off`);
  const output = (a.output as string | undefined) ?? 'yaml';
  if (output !== 'yaml' && output !== 'json') usage(`-o ${output}: use yaml or json`);
  const only = a.only as string | undefined;
  if (only !== undefined && !SECTIONS.includes(only as Section)) usage(`--only ${only}: use ir, xds or status`);
  if (a._.length) usage(`unexpected argument ${a._[0]} (files go after -f)`);

  const input = parseSources(readSources(files));
  const out = translate(input, {
    validation: validation as 'strict' | 'off',
    gateway: a.gateway as string | undefined,
  });
  for (const n of out.notes) console.error(`note: ${n}`);
  process.stdout.write(
    renderTranslation(out, {
      output: output as 'yaml' | 'json',
      only: only as Section | undefined,
      header: [
        `gwlab translate: ${input.length} object(s) from ${files.join(', ')}; validation ${validation}`,
        `${Object.keys(out.ir).length} Gateway(s) translated; ${Object.keys(out.status).length} status(es)`,
      ],
    }),
  );
});
