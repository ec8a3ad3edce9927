import type { X509Certificate } from 'node:crypto';

/** A certificate as an error names it: its place in the chain and its subject, never its body. */
export function describeInChain(cert: X509Certificate, depth: number): string {
  return `${depth === 0 ? 'the client certificate' : `the CA at depth ${depth}`} (${cert.subject.replace(/\n/g, ', ')})`;
}
