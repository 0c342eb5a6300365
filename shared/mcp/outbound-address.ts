// Which addresses an MCP server may be reached at: public ones always; loopback only where the policy allows it
// (the local runtime); private, link-local, metadata and other special ranges never, unless the host is listed.
import { BlockList, isIPv4, isIPv6 } from 'node:net';

const SPECIAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  SPECIAL.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  SPECIAL.addSubnet(network, prefix, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** The IPv4 address an IPv6 one stands for (IPv4-mapped `::ffff:a.b.c.d` or NAT64 `64:ff9b::a.b.c.d`), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1] !== undefined) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex?.[1] === undefined || hex[2] === undefined) return undefined;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

export type AddressKind = 'public' | 'loopback' | 'special';

/** What kind of address this is; anything that is not a plain IP address counts as special. */
export function addressKind(address: string): AddressKind {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIPv4(bare)) {
    if (LOOPBACK.check(bare, 'ipv4')) return 'loopback';
    return SPECIAL.check(bare, 'ipv4') ? 'special' : 'public';
  }
  if (isIPv6(bare)) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== undefined) return addressKind(v4);
    if (LOOPBACK.check(bare, 'ipv6')) return 'loopback';
    return SPECIAL.check(bare, 'ipv6') ? 'special' : 'public';
  }
  return 'special';
}

export interface OutboundPolicy {
  /** Loopback addresses are allowed (the local runtime, where a developer runs a server beside it). */
  allowLoopback: boolean;
  /** Host names allowed whatever they resolve to (MCP_ALLOWED_HOSTS), in lower case. */
  allowedHosts: readonly string[];
}

/** Why this host at these addresses may not be reached, or undefined when it may. */
export function refusalOf(
  host: string,
  addresses: readonly string[],
  policy: OutboundPolicy,
): string | undefined {
  if (policy.allowedHosts.includes(host.toLowerCase())) return undefined;
  if (addresses.length === 0) return `${host} resolves to no address`;
  for (const address of addresses) {
    const kind = addressKind(address);
    if (kind === 'public' || (kind === 'loopback' && policy.allowLoopback)) continue;
    return (
      `${host} resolves to ${address}, a ${kind === 'loopback' ? 'loopback' : 'private, link-local or reserved'} ` +
      'address this service does not connect to (an operator may list the host in MCP_ALLOWED_HOSTS)'
    );
  }
  return undefined;
}
