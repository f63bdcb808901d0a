import { describe, expect, it } from 'vitest';
import { needlesFor, REDACTED, redactSecret, scrub } from './redact.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('redaction', () => {
  it('a Secret keeps its keys and metadata, loses every value and its last-applied copy', () => {
    const s = redactSecret({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 's',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `{"data":{"k":"${b64('value-1')}"}}` },
      },
      data: { k: b64('value-1') },
      stringData: { j: 'value-2' },
      type: 'Opaque',
    });
    expect(s.data).toEqual({ k: REDACTED });
    expect(s.stringData).toEqual({ j: REDACTED });
    expect(s.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toBe(REDACTED);
    expect(JSON.stringify(s)).not.toMatch(/value-|dmFsdWUt/);
  });

  it('finds values decoded, in base64, escaped in JSON and line by line, and ignores short ones', () => {
    const pem = '-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END KEY-----\n';
    const needles = needlesFor(
      [{ data: { pem: b64(pem), short: b64('abc'), bin: Buffer.from([0xff, 0xfe, 0x00, 0x81]).toString('base64') } }],
      ['kube-token-123'],
    );
    const text = [
      `raw: ${pem}`,
      `json: ${JSON.stringify({ pem })}`,
      `yaml block:\n  ${pem.split('\n').join('\n  ')}`,
      `b64: ${b64(pem)}`,
      `bin: ${Buffer.from([0xff, 0xfe, 0x00, 0x81]).toString('base64')}`,
      'token: kube-token-123',
      'short: abc stays',
    ].join('\n');
    const r = scrub(text, needles);
    expect(r.text).not.toContain('MIIBOgIBAAJBAKj34GkxFhD9');
    expect(r.text).not.toContain(b64(pem));
    expect(r.text).not.toContain('/+4AgQ==');
    expect(r.text).not.toContain('kube-token-123');
    expect(r.text).toContain('short: abc stays');
    expect(r.replaced).toBeGreaterThanOrEqual(6);
    // Longest first: the whole value is replaced as one, not line by line leaving the rest.
    expect(r.text).toContain(`raw: ${REDACTED}`);
  });

  it('stringData values are searched for as given and in base64', () => {
    const needles = needlesFor([{ stringData: { p: 'plain-value' } }]);
    expect(needles).toContain('plain-value');
    expect(needles).toContain(b64('plain-value'));
  });
});
