import { X509Certificate } from 'node:crypto';
import { OptionsError } from '../lib/options-error';
import { createClientCertificateVerifier, type MtlsOptions } from '../lib/mtls';
import { mtlsFixtures, type MtlsFixtures } from './support/mtls-fixtures';

let f: MtlsFixtures;
beforeAll(async () => {
  f = await mtlsFixtures();
});

const build = (options: unknown) =>
  createClientCertificateVerifier(options as MtlsOptions, 'webhookReceiver');

describe('mtls options', () => {
  const bad: [string, () => unknown, RegExp][] = [
    ['no options object', () => undefined, /mtls must be an object/],
    ['no pin at all', () => ({}), /at least one of fingerprints, spki, subjects or ca/],
    ['only a source', () => ({ from: 'nginx' }), /at least one of/],
    ['empty pin lists', () => ({ fingerprints: [], spki: [], subjects: [] }), /at least one of/],
    [
      'an unknown source',
      () => ({ from: 'envoy', ca: f.certs.ca.cert }),
      /mtls.from must be one of 'socket', 'x-forwarded-client-cert'.*got "envoy"/,
    ],
    [
      'a misspelled option',
      () => ({ fingerprint: ['ab'] }),
      /unknown option "fingerprint"; did you mean "fingerprints"\?/,
    ],
    ['fingerprints not in an array', () => ({ fingerprints: 'AB:CD' }), /mtls.fingerprints must be an array/],
    [
      'a fingerprint too short',
      () => ({ fingerprints: ['AB:CD'] }),
      /mtls.fingerprints\[0\] is not a SHA-256 fingerprint/,
    ],
    [
      'a SHA-1 fingerprint',
      () => ({ fingerprints: [new X509Certificate(f.certs.client.cert).fingerprint] }),
      /40-digit SHA-1 fingerprint is not accepted/,
    ],
    [
      'a fingerprint that is not hex',
      () => ({ fingerprints: ['z'.repeat(64)] }),
      /not a SHA-256 fingerprint/,
    ],
    ['a fingerprint that is not a string', () => ({ fingerprints: [42] }), /mtls.fingerprints\[0\]/],
    [
      'an SPKI hash of the wrong length',
      () => ({ spki: ['c2hvcnQ='] }),
      /mtls.spki\[0\] is not a SHA-256 public-key hash/,
    ],
    [
      'an empty subject',
      () => ({ subjects: [''] }),
      /mtls.subjects\[0\] must be a non-empty string or a RegExp/,
    ],
    ['a subject that is a number', () => ({ subjects: ['ok', 7] }), /mtls.subjects\[1\]/],
    ['a CA that is not PEM', () => ({ ca: 'hello' }), /mtls.ca cannot be read: it holds no PEM certificate/],
    [
      'a CA that is a leaf certificate',
      () => ({ ca: [f.certs.client.cert] }),
      /mtls.ca\[0\] holds a certificate that is not a CA \(CN=service-webhooks test client\)/,
    ],
    [
      'a private key as the CA',
      () => ({ ca: f.certs.ca.key }),
      /mtls.ca must be PEM certificate text \(and never a private key\)/,
    ],
    [
      'a CA bundle with a key inside',
      () => ({ ca: f.certs.ca.cert + f.certs.ca.key }),
      /never a private key/,
    ],
    [
      'a CA that is not a string',
      () => ({ ca: [Buffer.from('x')] }),
      /mtls.ca\[0\] must be PEM certificate text/,
    ],
  ];
  it.each(bad)('rejects %s with an OptionsError', (_name, options, message) => {
    let thrown: unknown;
    try {
      build(options());
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OptionsError);
    expect((thrown as OptionsError).message).toMatch(/^\[service-webhooks\] webhookReceiver/);
    expect((thrown as OptionsError).message).toMatch(message);
    expect((thrown as OptionsError).message).not.toContain('MII');
  });

  it("defaults the source to 'socket'", () => {
    expect(build({ ca: f.certs.ca.cert }).from).toBe('socket');
    expect(build({ ca: f.certs.ca.cert, from: 'aws-alb' }).from).toBe('aws-alb');
  });

  it('takes a CA bundle of several certificates in one string', () => {
    expect(() => build({ ca: f.certs.ca.cert + '\n' + f.certs.ca.cert })).not.toThrow();
  });

  it('takes curl-style sha256// SPKI pins', () => {
    expect(() => build({ spki: [`sha256//${Buffer.alloc(32, 1).toString('base64')}`] })).not.toThrow();
  });
});
