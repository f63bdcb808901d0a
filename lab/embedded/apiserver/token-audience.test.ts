// Service-account token audiences and TokenRequest lifetimes, with real kubectl 1.32, as kube-apiserver 1.32 has them:
// a token is accepted only if its `aud` meets the server's --api-audiences (default the issuer;
// pkg/serviceaccount/jwt.go), and TokenRequest defaults expirationSeconds to 3600 and refuses < 600 s and > 2^32 s
// (pkg/apis/authentication/v1/defaults.go, pkg/apis/authentication/validation).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISSUER } from './authn.ts';
import { api, closeApiAgents } from './testing/requests.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;
const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
const tokenPath = '/api/v1/namespaces/team/serviceaccounts/bot/token';
const tokenRequest = (spec: Record<string, unknown>) => ({
  apiVersion: 'authentication.k8s.io/v1',
  kind: 'TokenRequest',
  spec,
});

beforeAll(async () => {
  lab = await startTestLab({ labName: 'tokens' });
  await lab.k(['create', 'namespace', 'team']);
  await lab.k(['create', 'serviceaccount', 'bot', '-n', 'team']);
  await lab.k(['create', 'role', 'cm', '--verb=list', '--resource=configmaps', '-n', 'team']);
  await lab.k(['create', 'rolebinding', 'bot-cm', '--role=cm', '--serviceaccount=team:bot', '-n', 'team']);
});
afterAll(async () => {
  await closeApiAgents();
  await lab?.stop();
});

describe('audiences', () => {
  it('a token for another audience is refused with 401; one naming the API audience works', async () => {
    const useAs = (token: string) =>
      lab.kubectl(['get', 'configmaps', '-n', 'team'], { kubeconfig: lab.kubeconfigFor(token, 'aud') });
    const vault = (
      await lab.k(['create', 'token', 'bot', '-n', 'team', '--audience=https://vault.example.com'])
    ).trim();
    expect(claims(vault).aud).toEqual(['https://vault.example.com']);
    const refused = await useAs(vault);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('error: You must be logged in to the server (Unauthorized)');
    const raw = await api(lab, 'GET', '/api/v1/namespaces/team/configmaps', { token: vault });
    expect(raw.status).toBe(401);
    expect(raw.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    const issued = lab.server.issueServiceAccountToken('team', 'bot', { audiences: ['https://vault.example.com'] });
    expect((await api(lab, 'GET', '/version', { token: issued })).status).toBe(401);

    // The default audience is the API's; a token naming it among others is accepted.
    const plain = (await lab.k(['create', 'token', 'bot', '-n', 'team'])).trim();
    expect(claims(plain).aud).toEqual([ISSUER]);
    expect((await useAs(plain)).code).toBe(0);
    const both = (
      await lab.k([
        'create',
        'token',
        'bot',
        '-n',
        'team',
        '--audience=https://vault.example.com',
        `--audience=${ISSUER}`,
      ])
    ).trim();
    expect((await useAs(both)).code).toBe(0);
  });

  it('apiAudiences sets the audiences accepted and the default of TokenRequest', async () => {
    const other = await startTestLab({ labName: 'audiences', apiAudiences: ['https://api.lab.example'] });
    try {
      await other.k(['create', 'serviceaccount', 'bot']);
      const t = (await other.k(['create', 'token', 'bot'])).trim();
      expect(claims(t).aud).toEqual(['https://api.lab.example']);
      expect((await api(other, 'GET', '/api/v1/namespaces/default/serviceaccounts', { token: t })).status).toBe(403);
      const issuerOnly = other.server.issueServiceAccountToken('default', 'bot', { audiences: [ISSUER] });
      expect((await api(other, 'GET', '/version', { token: issuerOnly })).status).toBe(401);
    } finally {
      await other.stop();
    }
  });
});

describe('lifetimes', () => {
  it('TokenRequest defaults to 3600 s; the handle too; a longer lifetime is given explicitly', async () => {
    const t = (await lab.k(['create', 'token', 'bot', '-n', 'team'])).trim();
    expect(claims(t).exp - claims(t).iat).toBe(3600);
    const r = await api(lab, 'POST', tokenPath, { body: tokenRequest({}) });
    expect(r.status).toBe(201);
    expect(r.json.spec).toEqual({ audiences: [ISSUER], expirationSeconds: 3600 });
    const h = lab.server.issueServiceAccountToken('team', 'bot');
    expect(claims(h).exp - claims(h).iat).toBe(3600);
    const day = (await lab.k(['create', 'token', 'bot', '-n', 'team', '--duration=24h'])).trim();
    expect(claims(day).exp - claims(day).iat).toBe(86400);
    const max = await api(lab, 'POST', tokenPath, { body: tokenRequest({ expirationSeconds: 2 ** 32 }) });
    expect(max.status).toBe(201);
  });

  it('under 10 minutes or over 2^32 s is 422 Invalid naming spec.expirationSeconds, with Kubernetes text', async () => {
    const short = await lab.kubectl(['create', 'token', 'bot', '-n', 'team', '--duration=5m']);
    expect(short.code).not.toBe(0);
    expect(short.stderr).toContain(
      'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes',
    );
    const long = await api(lab, 'POST', tokenPath, { body: tokenRequest({ expirationSeconds: 2 ** 32 + 1 }) });
    expect(long.status).toBe(422);
    expect(long.json).toMatchObject({
      kind: 'Status',
      reason: 'Invalid',
      code: 422,
      message:
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds',
      details: {
        group: 'authentication.k8s.io',
        kind: 'TokenRequest',
        causes: [
          {
            reason: 'FieldValueInvalid',
            field: 'spec.expirationSeconds',
            message: 'Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds',
          },
        ],
      },
    });
    const notNumber = await api(lab, 'POST', tokenPath, { body: tokenRequest({ expirationSeconds: '1h' }) });
    expect(notNumber.status).toBe(400);
    expect(notNumber.json.message).toContain('spec.expirationSeconds');
  });
});
