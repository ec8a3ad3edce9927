import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { createEventRouter, createFetchHandler, createNodeHandler, type ReceiverOptions } from '../lib';
import { buildEvent, createTestCertificates, DELIVERY_HEADERS } from '../lib/testing';
import { captureLogger } from './support/capture-logger';
import { describeWithServer, findBinary } from './support/server-binary';

const openssl = findBinary('openssl', ['/usr/bin', '/usr/local/bin']);
const describeWithOpenssl = describeWithServer(
  openssl !== undefined,
  'openssl',
  'install it (Debian: apt-get install openssl) or run CI=true to make this a failure',
);

const CA = 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign';
const many = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${i}.x`).join(',');

/**
 * Certificates made by the openssl CLI itself: name → [extensions (and any section they name), issuer
 * (none: self-signed), subject (default /CN=name)].
 */
const CERTS: [string, string, string?, string?][] = [
  ['root', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign'],
  ['root0', 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign'],
  ['root1', 'basicConstraints=critical,CA:TRUE,pathlen:1\nkeyUsage=critical,keyCertSign'],
  [
    'root_server',
    'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\nextendedKeyUsage=serverAuth',
  ],
  ['root_nosign', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature'],
  ['int', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign', 'root'],
  ['rogue', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign', 'root0'],
  ['int_of1', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign', 'root1'],
  ['int0', 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign', 'root'],
  ['int0b', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign', 'int0'],
  ['notca', 'basicConstraints=CA:FALSE', 'root'],
  ['nobc', 'keyUsage=critical,keyCertSign', 'root'],
  ['nocertsign', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature', 'root'],
  [
    'int_server',
    'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\nextendedKeyUsage=serverAuth',
    'root',
  ],
  [
    'leaf_ok',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth',
    'int',
  ],
  ['leaf_direct', 'basicConstraints=CA:FALSE', 'root'],
  ['leaf_rogue', 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth', 'rogue'],
  ['leaf_server', 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth', 'root'],
  ['leaf_both', 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth', 'root'],
  ['leaf_anyeku', 'basicConstraints=CA:FALSE\nextendedKeyUsage=anyExtendedKeyUsage', 'root'],
  ['leaf_ca', 'basicConstraints=CA:TRUE\nextendedKeyUsage=clientAuth', 'root'],
  ['leaf_encipher', 'basicConstraints=CA:FALSE\nkeyUsage=critical,keyEncipherment', 'root'],
  ['leaf_agree', 'basicConstraints=CA:FALSE\nkeyUsage=critical,keyAgreement', 'root'],
  ['leaf_nsserver', 'basicConstraints=CA:FALSE\nnsCertType=server', 'root'],
  ['leaf_nsclient', 'basicConstraints=CA:FALSE\nnsCertType=client,email', 'root'],
  ['leaf_notca', 'basicConstraints=CA:FALSE', 'notca'],
  ['leaf_nobc', 'basicConstraints=CA:FALSE', 'nobc'],
  ['leaf_nocertsign', 'basicConstraints=CA:FALSE', 'nocertsign'],
  ['leaf_intserver', 'basicConstraints=CA:FALSE', 'int_server'],
  ['leaf_of1', 'basicConstraints=CA:FALSE', 'int_of1'],
  ['leaf_int0b', 'basicConstraints=CA:FALSE', 'int0b'],
  ['leaf_rootserver', 'basicConstraints=CA:FALSE', 'root_server'],
  ['leaf_rootnosign', 'basicConstraints=CA:FALSE', 'root_nosign'],
  ['leaf_pl0', 'basicConstraints=CA:FALSE', 'root0'],
  // Name constraints (RFC 5280 §4.2.1.10) on intermediates and roots.
  ['nc_dns', `${CA}\nnameConstraints=critical,permitted;DNS:.tenant.example`, 'root'],
  ['nc_dns_ex', `${CA}\nnameConstraints=critical,excluded;DNS:service.example`, 'root'],
  ['nc_noncritical', `${CA}\nnameConstraints=permitted;DNS:.tenant.example`, 'root'],
  ['nc_ip', `${CA}\nnameConstraints=critical,permitted;IP:10.0.0.0/255.0.0.0`, 'root'],
  ['nc_ip_ex', `${CA}\nnameConstraints=critical,excluded;IP:192.168.0.0/255.255.0.0`, 'root'],
  ['nc_email', `${CA}\nnameConstraints=critical,permitted;email:tenant.example`, 'root'],
  ['nc_email_ex', `${CA}\nnameConstraints=critical,excluded;email:.service.example`, 'root'],
  ['nc_uri', `${CA}\nnameConstraints=critical,permitted;URI:.tenant.example`, 'root'],
  ['nc_dir', `${CA}\nnameConstraints=critical,permitted;dirName:dir\n[dir]\nO=Tenant`, 'root'],
  ['nc_root', `${CA}\nnameConstraints=critical,permitted;DNS:tenant.example`],
  [
    'nc_root_ex',
    `${CA}\nnameConstraints=critical,excluded;DNS:service.example,excluded;IP:10.0.0.0/255.0.0.0`,
  ],
  ['int_of_nc_root', CA, 'nc_root'],
  ['int_of_nc_dns', CA, 'nc_dns'],
  ['int_other_o', CA, 'nc_dir', '/O=Other/CN=int_other_o'],
  ['leaf_dns_out', 'subjectAltName=DNS:webhooks.service.example', 'nc_dns'],
  ['leaf_dns_in', 'subjectAltName=DNS:webhooks.tenant.example', 'nc_dns'],
  ['leaf_dns_base', 'subjectAltName=DNS:tenant.example', 'nc_dns'],
  ['leaf_dns_case', 'subjectAltName=DNS:Webhooks.TENANT.example', 'nc_dns'],
  ['leaf_dns_mixed', 'subjectAltName=DNS:a.tenant.example,DNS:webhooks.service.example', 'nc_dns'],
  // A DNS SAN holding a control character (DER: openssl's config cannot write one).
  [
    'leaf_dns_control',
    `basicConstraints=CA:FALSE\n2.5.29.17=DER:30:15:82:13:61:01:62:2E:73:65:72:76:69:63:65:2E:65:78:61:6D:70:6C:65`,
    'nc_dns',
  ],
  ['leaf_cn_out', 'basicConstraints=CA:FALSE', 'nc_dns', '/CN=webhooks.service.example'],
  ['leaf_cn_in', 'basicConstraints=CA:FALSE', 'nc_dns', '/CN=webhooks.tenant.example'],
  ['leaf_cn_label', 'basicConstraints=CA:FALSE', 'nc_dns', '/CN=webhooks'],
  ['leaf_cn_spaced', 'basicConstraints=CA:FALSE', 'nc_dns', '/CN=webhooks service.example'],
  ['leaf_cn_ipsan', 'subjectAltName=IP:10.1.2.3', 'nc_dns', '/CN=webhooks.service.example'],
  ['leaf_cn_dnssan', 'subjectAltName=DNS:a.tenant.example', 'nc_dns', '/CN=webhooks.service.example'],
  ['leaf_noncritical_out', 'subjectAltName=DNS:webhooks.service.example', 'nc_noncritical'],
  ['leaf_ex_out', 'subjectAltName=DNS:webhooks.service.example', 'nc_dns_ex'],
  ['leaf_ex_in', 'subjectAltName=DNS:webhooks.tenant.example', 'nc_dns_ex'],
  ['leaf_ex_suffix', 'subjectAltName=DNS:webhooks.myservice.example', 'nc_dns_ex'],
  ['leaf_ex_cn', 'basicConstraints=CA:FALSE', 'nc_dns_ex', '/CN=webhooks.service.example'],
  ['leaf_ip_in', 'subjectAltName=IP:10.1.2.3', 'nc_ip'],
  ['leaf_ip_out', 'subjectAltName=IP:11.1.2.3', 'nc_ip'],
  ['leaf_ip_v6', 'subjectAltName=IP:::1', 'nc_ip'],
  ['leaf_ip_dns', 'subjectAltName=DNS:webhooks.service.example', 'nc_ip'],
  ['leaf_ip_ex', 'subjectAltName=IP:192.168.1.1', 'nc_ip_ex'],
  ['leaf_ip_ex_other', 'subjectAltName=IP:192.169.1.1', 'nc_ip_ex'],
  ['leaf_email_in', 'subjectAltName=email:ops@tenant.example', 'nc_email'],
  ['leaf_email_out', 'subjectAltName=email:ops@service.example', 'nc_email'],
  ['leaf_email_sub', 'subjectAltName=email:ops@hooks.tenant.example', 'nc_email'],
  ['leaf_email_subject', 'basicConstraints=CA:FALSE', 'nc_email', '/emailAddress=ops@service.example/CN=x'],
  ['leaf_email_ex', 'subjectAltName=email:ops@hooks.service.example', 'nc_email_ex'],
  ['leaf_email_ex_host', 'subjectAltName=email:ops@service.example', 'nc_email_ex'],
  ['leaf_uri_in', 'subjectAltName=URI:https://hooks.tenant.example:8443/in', 'nc_uri'],
  ['leaf_uri_out', 'subjectAltName=URI:https://hooks.service.example/in', 'nc_uri'],
  ['leaf_dir_in', 'basicConstraints=CA:FALSE', 'nc_dir', '/O=Tenant/CN=leaf_dir_in'],
  ['leaf_dir_spaces', 'basicConstraints=CA:FALSE', 'nc_dir', '/O=  tEnAnT  /CN=leaf_dir_spaces'],
  ['leaf_dir_out', 'basicConstraints=CA:FALSE', 'nc_dir', '/O=Other/CN=leaf_dir_out'],
  ['leaf_dir_order', 'basicConstraints=CA:FALSE', 'nc_dir', '/CN=leaf_dir_order/O=Tenant'],
  ['leaf_under_other_o', 'basicConstraints=CA:FALSE', 'int_other_o', '/O=Tenant/CN=leaf_under_other_o'],
  ['leaf_root_out', 'subjectAltName=DNS:webhooks.service.example', 'int_of_nc_root'],
  ['leaf_root_in', 'subjectAltName=DNS:tenant.example', 'nc_root'],
  ['leaf_root_cn_out', 'basicConstraints=CA:FALSE', 'nc_root', '/CN=webhooks.service.example'],
  ['leaf_root_ex', 'subjectAltName=DNS:hooks.service.example', 'nc_root_ex'],
  ['leaf_root_ex_ip', 'subjectAltName=IP:10.9.9.9', 'nc_root_ex'],
  ['leaf_root_ex_ok', 'subjectAltName=DNS:hooks.tenant.example,IP:11.9.9.9', 'nc_root_ex'],
  ['leaf_two_up', 'subjectAltName=DNS:webhooks.service.example', 'int_of_nc_dns'],
  ['leaf_two_up_ok', 'subjectAltName=DNS:webhooks.tenant.example', 'int_of_nc_dns'],
  // Subtrees with a minimum or maximum, written as DER (openssl's config cannot say them).
  [
    'nc_max',
    `${CA}\n2.5.29.30=critical,DER:30:18:A0:16:30:14:82:0F:2E:74:65:6E:61:6E:74:2E:65:78:61:6D:70:6C:65:81:01:05`,
    'root',
  ],
  [
    'nc_min',
    `${CA}\n2.5.29.30=critical,DER:30:18:A0:16:30:14:82:0F:2E:74:65:6E:61:6E:74:2E:65:78:61:6D:70:6C:65:80:01:01`,
    'root',
  ],
  [
    'nc_min0',
    `${CA}\n2.5.29.30=critical,DER:30:18:A0:16:30:14:82:0F:2E:74:65:6E:61:6E:74:2E:65:78:61:6D:70:6C:65:80:01:00`,
    'root',
  ],
  ['nc_ip6', `${CA}\nnameConstraints=critical,permitted;IP:2001:db8::/ffff:ffff::`, 'root'],
  ['nc_mailbox_ex', `${CA}\nnameConstraints=critical,excluded;email:ops@service.example`, 'root'],
  ['leaf_max_dns', 'subjectAltName=DNS:a.tenant.example', 'nc_max'],
  ['leaf_max_ip', 'subjectAltName=IP:10.1.1.1', 'nc_max'],
  ['leaf_min_dns', 'subjectAltName=DNS:a.tenant.example', 'nc_min'],
  ['leaf_min0_dns', 'subjectAltName=DNS:a.tenant.example', 'nc_min0'],
  ['leaf_email_noat', 'subjectAltName=email:ops', 'nc_email'],
  ['leaf_uri_urn', 'subjectAltName=URI:urn:tenant.example:x', 'nc_uri'],
  ['leaf_ip6_in', 'subjectAltName=IP:2001:db8::1', 'nc_ip6'],
  ['leaf_ip6_out', 'subjectAltName=IP:2001:db9::1', 'nc_ip6'],
  ['leaf_mailbox_case', 'subjectAltName=email:Ops@service.example', 'nc_mailbox_ex'],
  ['leaf_mailbox_host', 'subjectAltName=email:ops@SERVICE.example', 'nc_mailbox_ex'],
  // More names × constraints than OpenSSL's NAME_CHECK_MAX (2^20): 1025 × 1025 is refused unread.
  ['nc_many', `${CA}\nnameConstraints=critical,${many('excluded;DNS:b', 1025)}`],
  ['leaf_many', `subjectAltName=${many('DNS:a', 1024)}`, 'nc_many'],
  ['leaf_few', 'subjectAltName=DNS:a.x', 'nc_many'],
  // Critical extensions OpenSSL does not know, and ones it does.
  ['crit_int', `${CA}\n1.2.3.4=critical,DER:05:00`, 'root'],
  ['crit_root', `${CA}\n1.2.3.4=critical,DER:05:00`],
  ['leaf_crit', 'basicConstraints=CA:FALSE\n1.2.3.4=critical,DER:05:00', 'root'],
  ['leaf_noncrit', 'basicConstraints=CA:FALSE\n1.2.3.4=DER:05:00', 'root'],
  ['leaf_crit_san', 'basicConstraints=critical,CA:FALSE\nsubjectAltName=critical,DNS:hooks.example', 'root'],
  ['leaf_crit_policy', 'basicConstraints=CA:FALSE\ncertificatePolicies=critical,1.2.3.5', 'root'],
  ['leaf_of_crit_int', 'basicConstraints=CA:FALSE', 'crit_int'],
  ['leaf_of_crit_root', 'basicConstraints=CA:FALSE', 'crit_root'],
  // pathLenConstraint two CAs up.
  ['root1b', 'basicConstraints=critical,CA:TRUE,pathlen:1\nkeyUsage=critical,keyCertSign'],
  ['int_a', CA, 'root1b'],
  ['int_b', CA, 'int_a'],
  ['leaf_int_b', 'basicConstraints=CA:FALSE', 'int_b'],
  ['leaf_int_a', 'basicConstraints=CA:FALSE', 'int_a'],
];

/** [what, leaf, trusted CA (`a+b`: both), intermediates the client sends]. */
const TABLE: [string, string, string, string[]][] = [
  ['a clientAuth leaf under an intermediate', 'leaf_ok', 'root', ['int']],
  ['a leaf with no extensions but basicConstraints', 'leaf_direct', 'root', []],
  ['a rogue intermediate under a pathlen:0 root', 'leaf_rogue', 'root0', ['rogue']],
  ['a pathlen:0 intermediate with a CA below it', 'leaf_int0b', 'root', ['int0b', 'int0']],
  ['one intermediate under a pathlen:1 root', 'leaf_of1', 'root1', ['int_of1']],
  ['a leaf right under a pathlen:0 root', 'leaf_pl0', 'root0', []],
  ['an extendedKeyUsage of serverAuth only', 'leaf_server', 'root', []],
  ['serverAuth and clientAuth', 'leaf_both', 'root', []],
  ['anyExtendedKeyUsage alone', 'leaf_anyeku', 'root', []],
  ['a CA:TRUE leaf with clientAuth', 'leaf_ca', 'root', []],
  ['a keyUsage of keyEncipherment only', 'leaf_encipher', 'root', []],
  ['a keyUsage of keyAgreement', 'leaf_agree', 'root', []],
  ['an nsCertType of server', 'leaf_nsserver', 'root', []],
  ['an nsCertType of client', 'leaf_nsclient', 'root', []],
  ['an intermediate that is CA:FALSE', 'leaf_notca', 'root', ['notca']],
  ['an intermediate without basicConstraints', 'leaf_nobc', 'root', ['nobc']],
  ['an intermediate whose keyUsage lacks keyCertSign', 'leaf_nocertsign', 'root', ['nocertsign']],
  ['an intermediate with serverAuth only', 'leaf_intserver', 'root', ['int_server']],
  ['a trusted root with serverAuth only', 'leaf_rootserver', 'root_server', []],
  ['a trusted root whose keyUsage lacks keyCertSign', 'leaf_rootnosign', 'root_nosign', []],
  ['DNS SAN outside a permitted subtree of an intermediate', 'leaf_dns_out', 'root', ['nc_dns']],
  ['DNS SAN inside a permitted subtree', 'leaf_dns_in', 'root', ['nc_dns']],
  ['DNS SAN equal to a permitted .domain (subdomains only)', 'leaf_dns_base', 'root', ['nc_dns']],
  ['DNS SAN inside a permitted subtree, in capitals', 'leaf_dns_case', 'root', ['nc_dns']],
  ['one DNS SAN in, one out', 'leaf_dns_mixed', 'root', ['nc_dns']],
  ['a DNS SAN with a control character, outside', 'leaf_dns_control', 'root', ['nc_dns']],
  ['a CN-only leaf whose CN is a host outside the subtree', 'leaf_cn_out', 'root', ['nc_dns']],
  ['a CN-only leaf whose CN is a host inside the subtree', 'leaf_cn_in', 'root', ['nc_dns']],
  ['a CN-only leaf whose CN is one label', 'leaf_cn_label', 'root', ['nc_dns']],
  ['a CN-only leaf whose CN holds a space', 'leaf_cn_spaced', 'root', ['nc_dns']],
  ['an IP SAN only, CN a host outside the DNS subtree', 'leaf_cn_ipsan', 'root', ['nc_dns']],
  ['a DNS SAN inside, CN a host outside', 'leaf_cn_dnssan', 'root', ['nc_dns']],
  ['a non-critical nameConstraints, DNS SAN outside', 'leaf_noncritical_out', 'root', ['nc_noncritical']],
  ['DNS SAN in an excluded subtree', 'leaf_ex_out', 'root', ['nc_dns_ex']],
  ['DNS SAN outside an excluded subtree', 'leaf_ex_in', 'root', ['nc_dns_ex']],
  ['DNS SAN ending in the excluded name, not at a dot', 'leaf_ex_suffix', 'root', ['nc_dns_ex']],
  ['a CN-only leaf whose CN is in an excluded subtree', 'leaf_ex_cn', 'root', ['nc_dns_ex']],
  ['IP SAN inside a permitted range', 'leaf_ip_in', 'root', ['nc_ip']],
  ['IP SAN outside a permitted range', 'leaf_ip_out', 'root', ['nc_ip']],
  ['IPv6 SAN under an IPv4 permitted range', 'leaf_ip_v6', 'root', ['nc_ip']],
  ['a DNS SAN under an IP-only constraint', 'leaf_ip_dns', 'root', ['nc_ip']],
  ['IP SAN in an excluded range', 'leaf_ip_ex', 'root', ['nc_ip_ex']],
  ['IP SAN outside an excluded range', 'leaf_ip_ex_other', 'root', ['nc_ip_ex']],
  ['email SAN at the permitted host', 'leaf_email_in', 'root', ['nc_email']],
  ['email SAN at another host', 'leaf_email_out', 'root', ['nc_email']],
  ['email SAN at a subdomain of the permitted host', 'leaf_email_sub', 'root', ['nc_email']],
  ['an emailAddress in the subject outside the permitted host', 'leaf_email_subject', 'root', ['nc_email']],
  ['email SAN under an excluded .domain', 'leaf_email_ex', 'root', ['nc_email_ex']],
  ['email SAN at the excluded .domain itself', 'leaf_email_ex_host', 'root', ['nc_email_ex']],
  ['URI SAN inside a permitted .domain', 'leaf_uri_in', 'root', ['nc_uri']],
  ['URI SAN outside a permitted .domain', 'leaf_uri_out', 'root', ['nc_uri']],
  ['a subject inside a permitted directoryName', 'leaf_dir_in', 'root', ['nc_dir']],
  [
    'a subject inside a permitted directoryName, other case and spaces',
    'leaf_dir_spaces',
    'root',
    ['nc_dir'],
  ],
  ['a subject outside a permitted directoryName', 'leaf_dir_out', 'root', ['nc_dir']],
  ['a subject with the permitted RDN not first', 'leaf_dir_order', 'root', ['nc_dir']],
  [
    'an intermediate outside its issuer’s directoryName',
    'leaf_under_other_o',
    'root',
    ['int_other_o', 'nc_dir'],
  ],
  ['DNS SAN outside the root’s permitted subtree', 'leaf_root_out', 'nc_root', ['int_of_nc_root']],
  ['DNS SAN equal to the root’s permitted name', 'leaf_root_in', 'nc_root', []],
  ['a CN-only leaf outside the root’s permitted subtree', 'leaf_root_cn_out', 'nc_root', []],
  ['DNS SAN in the root’s excluded subtree', 'leaf_root_ex', 'nc_root_ex', []],
  ['IP SAN in the root’s excluded range', 'leaf_root_ex_ip', 'nc_root_ex', []],
  ['DNS and IP SANs outside the root’s excluded subtrees', 'leaf_root_ex_ok', 'nc_root_ex', []],
  ['a constraint two CAs up, DNS SAN outside', 'leaf_two_up', 'root', ['int_of_nc_dns', 'nc_dns']],
  ['a constraint two CAs up, DNS SAN inside', 'leaf_two_up_ok', 'root', ['int_of_nc_dns', 'nc_dns']],
  ['an unknown critical extension on the leaf', 'leaf_crit', 'root', []],
  ['an unknown non-critical extension on the leaf', 'leaf_noncrit', 'root', []],
  ['critical basicConstraints and subjectAltName on the leaf', 'leaf_crit_san', 'root', []],
  ['a critical certificatePolicies on the leaf', 'leaf_crit_policy', 'root', []],
  ['an unknown critical extension on the intermediate', 'leaf_of_crit_int', 'root', ['crit_int']],
  ['an unknown critical extension on the trusted root', 'leaf_of_crit_root', 'crit_root', []],
  ['two intermediates under a pathlen:1 root', 'leaf_int_b', 'root1b', ['int_b', 'int_a']],
  ['one of those intermediates under the pathlen:1 root', 'leaf_int_a', 'root1b', ['int_a']],
  ['a DNS SAN under a subtree with a maximum', 'leaf_max_dns', 'root', ['nc_max']],
  ['only an IP SAN under a DNS subtree with a maximum', 'leaf_max_ip', 'root', ['nc_max']],
  ['a DNS SAN under a subtree with a minimum of 1', 'leaf_min_dns', 'root', ['nc_min']],
  ['a DNS SAN under a subtree with a minimum of 0', 'leaf_min0_dns', 'root', ['nc_min0']],
  ['an email SAN without @ under an email constraint', 'leaf_email_noat', 'root', ['nc_email']],
  ['a URI SAN without // under a URI constraint', 'leaf_uri_urn', 'root', ['nc_uri']],
  ['an IPv6 SAN inside a permitted IPv6 range', 'leaf_ip6_in', 'root', ['nc_ip6']],
  ['an IPv6 SAN outside a permitted IPv6 range', 'leaf_ip6_out', 'root', ['nc_ip6']],
  ['an excluded mailbox, local part in other case', 'leaf_mailbox_case', 'root', ['nc_mailbox_ex']],
  ['an excluded mailbox, host in other case', 'leaf_mailbox_host', 'root', ['nc_mailbox_ex']],
  ['1025 names under 1025 constraints', 'leaf_many', 'nc_many', []],
  ['2 names under 1025 constraints', 'leaf_few', 'nc_many', []],
  // mtls.ca holding an intermediate with its root: the root still binds, as in openssl's CAfile.
  ['a root’s constraint, its intermediate also trusted', 'leaf_root_out', 'int_of_nc_root+nc_root', []],
  ['a pathlen:0 root, the rogue intermediate also trusted', 'leaf_rogue', 'rogue+root0', []],
  ['a clientAuth leaf, its intermediate also trusted', 'leaf_ok', 'int+root', []],
];

/** What openssl's verify says of a refused chain, and what our refusal must then say. */
const REASONS: [RegExp, RegExp][] = [
  [/permitted subtree violation/, /outside every subtree the nameConstraints of/],
  [/excluded subtree violation/, /which the nameConstraints of .* exclude/],
  [/unhandled critical extension/, /has a critical extension OpenSSL does not handle \(1\.2\.3\.4\)/],
  [/path length constraint exceeded/, /\(pathLenConstraint\)/],
  [/name constraints minimum and maximum not supported/, /with a minimum or maximum/],
  [/unsupported or invalid name syntax/, /cannot be checked against/],
  [/unspecified certificate verification error/, /has too many names to check against/],
];

/** The ways a receiver meets a chain: two proxy headers (through Fetch) and the TLS socket (node:http). */
const SOURCES = ['aws-alb', 'client-cert', 'socket'] as const;

describeWithOpenssl('chains judged as `openssl verify -purpose sslclient` judges them', () => {
  let dir: string;
  let tlsServer: https.Server;
  let port: number;
  let serverCa: string;
  let tls: { key: string; cert: string };
  const handled = new Map<string, string[]>();
  const pem = (name: string) =>
    name
      .split('+')
      .map((one) => readFileSync(path.join(dir, `${one}.pem`), 'utf8'))
      .join('');
  const run = (args: string[]) =>
    execFileSync(openssl as string, args, { cwd: dir, stdio: 'pipe', timeout: 20_000 });

  /** A receiver trusting `ca`, reading certificates from `from`; undefined when it refuses `ca` itself. */
  function receiverOptions(from: (typeof SOURCES)[number], ca: string): ReceiverOptions {
    const seen = handled.get(`${from} ${ca}`) ?? [];
    handled.set(`${from} ${ca}`, seen);
    const router = createEventRouter().on('ag.access_pass.issued', (event) => void seen.push(event.id));
    return { router, logger: captureLogger(), mtls: { from, ca: pem(ca) } };
  }

  const sockets = new Map<string, ReturnType<typeof createNodeHandler> | Error>();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sw-openssl-chains-'));
    for (const [name, extensions, issuer, subject] of CERTS) {
      writeFileSync(
        path.join(dir, `${name}.ext`),
        `[req]\ndistinguished_name=dn\n[dn]\n[x]\n${extensions}\n`,
      );
      // One openssl run a certificate: its key (P-256), and the certificate signed by its issuer's
      // key (or its own), as `req -x509 -CA` makes it since OpenSSL 3.0.
      run([
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-subj',
        subject ?? `/CN=${name}`,
        '-config',
        `${name}.ext`,
        '-extensions',
        'x',
        '-days',
        '30',
        '-out',
        `${name}.pem`,
        ...(issuer === undefined
          ? []
          : [
              '-CA',
              `${issuer}.pem`,
              '-CAkey',
              `${issuer}.key`,
              '-set_serial',
              String(Math.floor(Math.random() * 1e9)),
            ]),
      ]);
    }
    // One HTTPS server for the socket rows: a receiver per trusted CA, at /<ca>. It asks for a client
    // certificate and refuses none at the handshake (rejectUnauthorized: false), so mtls.ca decides.
    const server = await createTestCertificates();
    serverCa = server.ca.cert;
    tls = server.server;
    tlsServer = https.createServer(
      { key: tls.key, cert: tls.cert, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const handler = sockets.get(String(req.url).split('/')[1] ?? '');
        if (handler === undefined || handler instanceof Error) res.writeHead(404).end();
        else handler(req, res);
      },
    );
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    port = (tlsServer.address() as AddressInfo).port;
  }, 120_000);
  afterAll(async () => {
    tlsServer.closeAllConnections();
    await new Promise((resolve) => tlsServer.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /** openssl's verdicts by chain: each source's row asks the same question, asked once of openssl. */
  const verdicts = new Map<string, { ok: boolean; error: string }>();
  function openssl_(leaf: string, ca: string, intermediates: string[]): { ok: boolean; error: string } {
    const key = JSON.stringify([leaf, ca, intermediates]);
    const known = verdicts.get(key) ?? verify(leaf, ca, intermediates);
    verdicts.set(key, known);
    return known;
  }
  function verify(leaf: string, ca: string, intermediates: string[]): { ok: boolean; error: string } {
    writeFileSync(path.join(dir, 'trusted.pem'), pem(ca));
    const args = ['verify', '-purpose', 'sslclient', '-CAfile', 'trusted.pem'];
    if (intermediates.length > 0) {
      writeFileSync(path.join(dir, 'untrusted.pem'), intermediates.map(pem).join(''));
      args.push('-untrusted', 'untrusted.pem');
    }
    try {
      run([...args, `${leaf}.pem`]);
      return { ok: true, error: '' };
    } catch (error) {
      return { ok: false, error: String((error as { stderr?: Buffer }).stderr) };
    }
  }

  interface Verdict {
    ok: boolean;
    detail: string;
  }

  async function viaHeader(
    from: 'aws-alb' | 'client-cert',
    leaf: string,
    ca: string,
    intermediates: string[],
  ): Promise<Verdict | Error> {
    let handler: ReturnType<typeof createFetchHandler>;
    try {
      handler = createFetchHandler(receiverOptions(from, ca));
    } catch (error) {
      return error as Error;
    }
    const der = (name: string) => `:${new X509Certificate(pem(name)).raw.toString('base64')}:`;
    const headers: Record<string, string> =
      from === 'aws-alb'
        ? {
            'x-amzn-mtls-clientcert': encodeURIComponent([leaf, ...intermediates].map(pem).join(''))
              .replace(/%2B/g, '+')
              .replace(/%2F/g, '/')
              .replace(/%3D/g, '='),
          }
        : { 'client-cert': der(leaf), 'client-cert-chain': intermediates.map(der).join(', ') };
    const event = buildEvent('ag.access_pass.issued');
    const answer = await handler(
      new Request('https://example.test/hooks', {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, ...headers },
        body: JSON.stringify(event),
      }),
    );
    return judged(from, ca, event.id, answer.status, answer.headers.get('content-type'), await answer.text());
  }

  async function viaSocket(leaf: string, ca: string, intermediates: string[]): Promise<Verdict | Error> {
    if (!sockets.has(ca)) {
      try {
        sockets.set(ca, createNodeHandler({ ...receiverOptions('socket', ca), path: `/${ca}` }));
      } catch (error) {
        sockets.set(ca, error as Error);
      }
    }
    const handler = sockets.get(ca);
    if (handler instanceof Error) return handler;
    const event = buildEvent('ag.access_pass.issued');
    const answer = await new Promise<{ status: number; type: string | undefined; text: string }>(
      (resolve, reject) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            port,
            path: `/${ca}`,
            method: 'POST',
            headers: DELIVERY_HEADERS,
            ca: serverCa,
            servername: 'localhost',
            checkServerIdentity: () => undefined,
            // The client sends its intermediates after its certificate, as a TLS client does.
            cert: [leaf, ...intermediates].map(pem).join(''),
            key: readFileSync(path.join(dir, `${leaf}.key`), 'utf8'),
            agent: false,
            timeout: 5_000,
          },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], text }),
            );
          },
        );
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', reject);
        req.end(JSON.stringify(event));
      },
    );
    return judged('socket', ca, event.id, answer.status, answer.type ?? null, answer.text);
  }

  /** A receiver's answer as a verdict, holding it to "200 only when handled, 403 problem+json and not handled". */
  function judged(
    from: string,
    ca: string,
    id: string,
    status: number,
    type: string | null,
    text: string,
  ): Verdict {
    const seen = handled.get(`${from} ${ca}`) ?? [];
    if (status === 200) {
      expect(seen).toContain(id);
      return { ok: true, detail: '' };
    }
    expect(seen).not.toContain(id);
    expect(status).toBe(403);
    expect(type).toMatch(/^application\/problem\+json/);
    const problem = JSON.parse(text) as { type: string; detail: string };
    // A refusal quotes the sender's names: never with a control character a log would act on.
    expect(problem.detail).not.toMatch(/\p{Cc}/u);
    expect(problem.type).toMatch(/untrusted-client-certificate$/);
    return { ok: false, detail: problem.detail };
  }

  describe.each(SOURCES)('through a receiver reading the certificate from %s', (from) => {
    it.each(TABLE)('%s: the same verdict as openssl', async (_name, leaf, ca, intermediates) => {
      const theirs = openssl_(leaf, ca, intermediates);
      const ours =
        from === 'socket'
          ? await viaSocket(leaf, ca, intermediates)
          : await viaHeader(from, leaf, ca, intermediates);
      if (ours instanceof Error) {
        // A CA that could never sign (Node's X509_check_ca says no) is refused when the receiver is built.
        expect(ours.message).toMatch(/mtls.ca holds a certificate that is not a CA/);
        expect(theirs.ok).toBe(false);
        return;
      }
      expect(ours.ok).toBe(theirs.ok);
      for (const [said, detail] of REASONS) if (said.test(theirs.error)) expect(ours.detail).toMatch(detail);
    });
  });

  it.each([
    ['a TLS server that leaves the chain to mtls.ca', false, 'root'],
    // Node shows a verifying server no intermediate at all: mtls.ca must hold it, beside its root.
    ['a TLS server that verifies, mtls.ca holding the intermediate and the root', true, 'int+root'],
  ])(
    '%s: two receivers on one keep-alive connection both accept a chain through an intermediate',
    async (_name, verifies, trusted) => {
      // Node hands a server the client's intermediates once per connection: whatever reads the peer
      // certificate second (a second receiver, or the first after its check cache expired) must still
      // have them.
      const seen: string[] = [];
      const receiver = (at: string) =>
        createNodeHandler({
          router: createEventRouter().on('ag.access_pass.issued', (event) => void seen.push(event.id)),
          logger: captureLogger(),
          mtls: { from: 'socket', ca: pem(trusted) },
          path: at,
        });
      const first = receiver('/first');
      const second = receiver('/second');
      const server = https.createServer(
        {
          key: tls.key,
          cert: tls.cert,
          requestCert: true,
          rejectUnauthorized: verifies,
          ...(verifies ? { ca: pem('root') } : {}),
        },
        (req, res) => (req.url === '/first' ? first : second)(req, res),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      const sockets = new Set<unknown>();
      const send = (at: string, id: string) =>
        new Promise<number>((resolve, reject) => {
          const req = https.request(
            {
              host: '127.0.0.1',
              port: (server.address() as AddressInfo).port,
              path: at,
              method: 'POST',
              headers: DELIVERY_HEADERS,
              ca: serverCa,
              servername: 'localhost',
              cert: pem('leaf_ok') + pem('int'),
              key: readFileSync(path.join(dir, 'leaf_ok.key'), 'utf8'),
              agent,
            },
            (res) => {
              sockets.add(res.socket);
              res.resume();
              res.on('end', () => {
                clearTimeout(bound);
                resolve(res.statusCode ?? 0);
              });
            },
          );
          // A timer, not the request's timeout option: the agent does not pool a socket made with one.
          const bound = setTimeout(() => req.destroy(new Error('timed out')), 5_000);
          req.on('error', reject);
          req.end(JSON.stringify({ ...buildEvent('ag.access_pass.issued'), id }));
        });
      try {
        expect(await send('/first', 'evt-first')).toBe(200);
        expect(await send('/second', 'evt-second')).toBe(200);
        expect(sockets.size).toBe(1);
        expect(seen).toEqual(['evt-first', 'evt-second']);
      } finally {
        agent.destroy();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );

  it('the table holds both verdicts and every reason, so agreeing means something', () => {
    const verdicts = TABLE.map(([, leaf, ca, intermediates]) => openssl_(leaf, ca, intermediates));
    expect(TABLE.length).toBeGreaterThanOrEqual(30);
    expect(verdicts.filter((v) => v.ok).length).toBeGreaterThanOrEqual(15);
    expect(verdicts.filter((v) => !v.ok).length).toBeGreaterThanOrEqual(30);
    for (const [said] of REASONS) expect(verdicts.some((v) => said.test(v.error))).toBe(true);
  });
});
