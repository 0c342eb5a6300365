// Keeps web pages away from the local runtime (DNS rebinding): it listens on loopback, but a site whose name
// resolves to 127.0.0.1 reaches it too. A request is served only when its Host names this machine (or a host a
// setting allows), its Origin, if any, is loopback or allowed, and principal headers come from a loopback caller.

/** Why a request is refused (403), or undefined when it may be served. */
export interface Refusal {
  code: string;
  detail: string;
}

export interface RebindingPolicy {
  /** Host names (no port) besides the loopback ones that requests may name: LOCAL_ALLOWED_HOSTS. */
  allowedHosts: readonly string[];
  /** Whether CORS_ALLOWED_ORIGINS lets this origin call. */
  corsAllows(origin: string): boolean;
}

export interface FrontDoorRequest {
  host: string | undefined;
  origin: string | undefined;
  remoteAddress: string | undefined;
  /** Whether it carries any x-ms-client-principal* header (the dev identity, or App Service's). */
  hasPrincipalHeaders: boolean;
}

/** localhost, *.localhost (RFC 6761), 127.0.0.0/8 and [::1]; never 0.0.0.0, which some browsers also route here. */
export function isLoopbackHostname(hostname: string): boolean {
  const name = normalizeHostname(hostname);
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
  );
}

/** A socket's remote address on this machine: 127.0.0.0/8, ::1, or either as an IPv4-mapped IPv6 address. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const ipv4 = address.replace(/^::ffff:/i, '');
  return ipv4 === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ipv4);
}

/** Lower-case, without the trailing dot of a fully qualified name ("localhost." is localhost). */
function normalizeHostname(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

/** The host name of a Host header or an origin, or undefined when it is not one. */
function hostnameOf(authority: string, scheme = 'http'): string | undefined {
  try {
    const url = new URL(`${scheme}://${authority}`);
    return url.username === '' && url.password === '' && url.pathname === '/' ? url.hostname : undefined;
  } catch {
    return undefined;
  }
}

export function frontDoorRefusal(request: FrontDoorRequest, policy: RebindingPolicy): Refusal | undefined {
  const allowed = new Set(policy.allowedHosts.map(normalizeHostname));
  const isAllowedName = (hostname: string) =>
    isLoopbackHostname(hostname) || allowed.has(normalizeHostname(hostname));

  const hostname = request.host === undefined ? undefined : hostnameOf(request.host);
  if (hostname === undefined || !isAllowedName(hostname))
    return {
      code: 'host_not_allowed',
      detail:
        `The local runtime answers only requests for this machine (localhost, 127.0.0.1, [::1]), not for ` +
        `${JSON.stringify(request.host ?? '')}: add the name to LOCAL_ALLOWED_HOSTS if you meant to reach it that way.`,
    };

  if (request.origin !== undefined && !policy.corsAllows(request.origin)) {
    const origin = /^(https?):\/\/(.+)$/i.exec(request.origin);
    const originHost = origin?.[2] === undefined ? undefined : hostnameOf(origin[2], origin[1]);
    if (originHost === undefined || !isAllowedName(originHost))
      return {
        code: 'origin_not_allowed',
        detail:
          `Pages from ${JSON.stringify(request.origin)} may not call the local runtime: only pages served from ` +
          'this machine, or origins listed in CORS_ALLOWED_ORIGINS.',
      };
  }

  if (request.hasPrincipalHeaders && !isLoopbackAddress(request.remoteAddress))
    return {
      code: 'identity_not_allowed',
      detail:
        'Identity headers (x-ms-client-principal*) are accepted only from callers on this machine: the dev ' +
        'users are for local development.',
    };
  return undefined;
}
