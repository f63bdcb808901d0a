// The next steps lab:up prints, built from the flags the user gave, so that each command works as printed: the lab
// tools get `--name <lab>` (which means that lab's own kubeconfig and context, whatever KUBECONFIG says) and `--home`
// when given; kubectl gets `--context` when one was given; `lab:up` again gets the whole command line. Pure, tested.

export interface UpHintInput {
  name: string;
  /** --name was on the command line. */
  nameGiven: boolean;
  home: string;
  /** --home was on the command line. */
  homeGiven: boolean;
  /** lab:up's own arguments, as given (for "run it again"). */
  argv: string[];
  /** --kubeconfig and --context as given (existing backend). */
  kubeconfigFlag?: string;
  contextFlag?: string;
  /** KUBECONFIG of the user's environment: when set, a tool without --name would talk to that cluster instead. */
  envKubeconfig?: string;
}

const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);

/** The flags that make a lab tool talk to this lab: `--name <lab> [--home <dir>]`, or none when none is needed. */
export function labFlagList(i: UpHintInput): string[] {
  return [...(i.nameGiven || i.envKubeconfig ? ['--name', i.name] : []), ...(i.homeGiven ? ['--home', i.home] : [])];
}

/** ` -- <args> <lab flags>` for `npm run <tool>`, or '' when there is nothing to pass. */
export function labToolFlags(i: UpHintInput, args: string[] = []): string {
  const flags = [...args, ...labFlagList(i)];
  return flags.length ? ` -- ${flags.map(quote).join(' ')}` : '';
}

/** `kubectl`, with --context when the user picked one (the lab's kubeconfig then may have another current one). */
export function kubectlFor(i: UpHintInput): string {
  return `kubectl${i.contextFlag ? ` --context ${quote(i.contextFlag)}` : ''}`;
}

/** What lab:up says to run when a step fails. */
export function upFailureHint(i: UpHintInput): string {
  const again = `npm run lab:up${i.argv.length ? ` -- ${i.argv.map(quote).join(' ')}` : ''}`;
  return `npm run lab:status${labToolFlags(i)} to see what is there; npm run lab:down${labToolFlags(i)} and ${again} again to start afresh`;
}

/** What lab:up prints once the lab is up. */
export function upSummary(
  i: UpHintInput,
  up: { backend: string; reused: boolean; elapsed: string; kubeconfig: string; context: string; merged: boolean },
): string {
  const ns = 'gwvendor-system';
  const k = kubectlFor(i);
  const copyOf = i.kubeconfigFlag ? `   # lab ${i.name}'s copy of ${i.kubeconfigFlag}` : '';
  const merged = up.merged ? `   # or: kubectl config use-context ${up.context}` : '';
  return `
Lab ${i.name} is up (${up.backend}${up.reused ? ', reused' : ''}) in ${up.elapsed}.

  export KUBECONFIG=${quote(up.kubeconfig)}${copyOf}${merged}
  ${k} get pods -n ${ns}

Debug interfaces (contract 4.1-4.3), by port-forward:
  ${k} -n ${ns} port-forward deploy/gwvendor 9095            # control plane admin: http://localhost:9095/
  ${k} -n ${ns} port-forward deploy/<gateway_name> 19000     # proxy admin: http://localhost:19000/config_dump
  ${k} -n ${ns} port-forward deploy/<gateway_name> 8080:80   # gateway traffic on localhost:8080
  (or: npm run lab:pf -- controlplane | proxy <gateway_name> | gateway <gateway_name>${labFlagList(i)
    .map((f) => ` ${quote(f)}`)
    .join('')})

Traffic through a gateway (contract 4.4), once a Gateway and an HTTPRoute exist:
  IP=$(${k} -n ${ns} get svc <gateway_name> -o jsonpath='{.status.loadBalancer.ingress[0].ip}')
  PORT=$(${k} -n ${ns} get svc <gateway_name> -o jsonpath='{.metadata.annotations.gwlab\\.dev/lb-port-80}')
  curl -H 'Host: www.example.com' http://$IP:\${PORT:-80}/headers   # PORT: set when the lab could not bind 80

Status: npm run lab:status${labToolFlags(i)}    Stop: npm run lab:down${labToolFlags(i)}`;
}
