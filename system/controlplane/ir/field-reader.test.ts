// field-reader.ts, the one reading of a policy that TrafficPolicy and ListenerPolicy share: its identity; durations read
// as GEP-2257 (an invalid one a problem naming the field), then Valid, or Invalid naming every problem, with nothing
// applied under strict validation and the settings as written with validation off; each problem a finding.
import { describe, expect, it } from 'vitest';
import { fieldReader, policyIdentity, validationOutcome } from './field-reader.ts';

const ref = { kind: 'ListenerPolicy', namespace: 'app', name: 'p' };

describe('a policy read field by field', () => {
  it('a valid policy: its settings, Valid, no findings', () => {
    const { reader, problems } = fieldReader();
    const settings = { idleTimeout: reader.duration('spec.idleTimeout', '1m30s') };
    expect(validationOutcome(ref, 'strict', problems, settings)).toEqual({
      settings: { idleTimeout: '90s' },
      accepted: { ok: true, reason: 'Valid', message: 'the policy is valid' },
      findings: [],
    });
  });

  it('an invalid one: Invalid naming each problem; strict applies nothing, off applies what it says', () => {
    const { reader, problems } = fieldReader();
    const settings = { idleTimeout: reader.duration('spec.idleTimeout', 'soon'), xffNumTrustedHops: 2 };
    reader.problem('spec.maxRequestHeadersKb', 'must be between 1 and 8192');
    const message = 'spec.idleTimeout: invalid duration "soon"; spec.maxRequestHeadersKb: must be between 1 and 8192';
    const strict = validationOutcome(ref, 'strict', problems, settings);
    expect(strict.settings).toEqual({});
    expect(strict.accepted).toEqual({ ok: false, reason: 'Invalid', message });
    expect(strict.findings).toEqual([
      { resource: ref, field: 'spec.idleTimeout', message: 'invalid duration "soon"' },
      { resource: ref, field: 'spec.maxRequestHeadersKb', message: 'must be between 1 and 8192' },
    ]);
    expect(validationOutcome(ref, 'off', problems, settings).settings).toBe(settings);
  });
});

describe('a policy identity', () => {
  it('reference, key, generation and creationTimestamp, with the defaults of a bare object', () => {
    expect(
      policyIdentity('TrafficPolicy', { name: 'p', namespace: 'app', generation: 4, creationTimestamp: 't' }),
    ).toEqual({
      ref: { kind: 'TrafficPolicy', namespace: 'app', name: 'p' },
      key: 'app/p',
      generation: 4,
      creationTimestamp: 't',
    });
    expect(policyIdentity('ListenerPolicy', { name: 'p' })).toEqual({
      ref: { kind: 'ListenerPolicy', namespace: 'default', name: 'p' },
      key: 'default/p',
      generation: 1,
      creationTimestamp: '',
    });
  });
});
