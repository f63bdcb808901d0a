// lab:up's next steps repeat the flags the user gave (issue 17 point 5): `--name`/`--home` on every lab tool (and
// `--name` even for the default lab when KUBECONFIG is exported, since the tools would otherwise follow it),
// `--context` on every kubectl line, and the whole command line for "lab:up again".
import { describe, expect, it } from 'vitest';
import { type UpHintInput, upFailureHint, upSummary } from './hints.ts';

const base: UpHintInput = { name: 'gwlab', nameGiven: false, home: '/h', homeGiven: false, argv: [] };
const up = {
  backend: 'embedded',
  reused: false,
  elapsed: '9.0 s',
  kubeconfig: '/h/me/kubeconfig',
  context: 'gwlab-me',
  merged: false,
};
const npmLines = (text: string) => text.split('\n').filter((l) => l.includes('npm run'));

describe('lab:up hints', () => {
  it('--name me: every lab tool hint says --name me', () => {
    const i = { ...base, name: 'me', nameGiven: true, argv: ['--name', 'me'] };
    const text = upSummary(i, up);
    expect(npmLines(text)).toEqual([
      '  (or: npm run lab:pf -- controlplane | proxy <gateway_name> | gateway <gateway_name> --name me)',
      'Status: npm run lab:status -- --name me    Stop: npm run lab:down -- --name me',
    ]);
    expect(upFailureHint(i)).toBe(
      'npm run lab:status -- --name me to see what is there; npm run lab:down -- --name me and npm run lab:up -- --name me again to start afresh',
    );
  });

  it('the default lab with nothing given or exported: the commands as they are', () => {
    const text = upSummary(base, up);
    expect(npmLines(text)).toEqual([
      '  (or: npm run lab:pf -- controlplane | proxy <gateway_name> | gateway <gateway_name>)',
      'Status: npm run lab:status    Stop: npm run lab:down',
    ]);
    expect(text).toContain('\n  kubectl -n gwvendor-system port-forward deploy/gwvendor 9095 ');
  });

  it('an exported KUBECONFIG: --name is spelled out, or the tools would follow KUBECONFIG', () => {
    const text = upSummary({ ...base, envKubeconfig: '/elsewhere' }, up);
    expect(text).toContain('Status: npm run lab:status -- --name gwlab    Stop: npm run lab:down -- --name gwlab');
  });

  it('--home, --kubeconfig and --context (existing backend): repeated where each applies', () => {
    const i: UpHintInput = {
      ...base,
      name: 'ext',
      nameGiven: true,
      home: '/my home',
      homeGiven: true,
      argv: [
        '--cluster',
        'existing',
        '--name',
        'ext',
        '--home',
        '/my home',
        '--kubeconfig',
        '/k.yaml',
        '--context',
        'prod',
      ],
      kubeconfigFlag: '/k.yaml',
      contextFlag: 'prod',
    };
    const text = upSummary(i, { ...up, backend: 'existing', kubeconfig: '/my home/ext/kubeconfig', context: 'prod' });
    expect(text).toContain("export KUBECONFIG='/my home/ext/kubeconfig'   # lab ext's copy of /k.yaml\n");
    const kubectlLines = text.split('\n').filter((l) => /kubectl /.test(l) && !l.includes('export'));
    expect(kubectlLines).toHaveLength(6);
    for (const l of kubectlLines) expect(l).toContain('kubectl --context prod ');
    expect(text).toContain("Status: npm run lab:status -- --name ext --home '/my home'");
    expect(upFailureHint(i)).toContain(
      "npm run lab:up -- --cluster existing --name ext --home '/my home' --kubeconfig /k.yaml --context prod again",
    );
  });
});
