// Route table of the data-plane REST API under `{prefix}/api/`, in the SDK's own templates
// (`hubs/{hub}/users/{userId}/:send`): literal segments match exactly, `{name}` segments capture one segment.

export interface RouteDefinition<T> {
  method: string;
  template: string;
  target: T;
}

export type RestRouteMatch<T> =
  | { kind: 'matched'; target: T; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' }
  | { kind: 'bad-encoding' };

export class RestRoutes<T> {
  private readonly routes: { method: string; segments: string[]; target: T }[];

  constructor(definitions: readonly RouteDefinition<T>[]) {
    this.routes = definitions.map((d) => ({
      method: d.method,
      segments: d.template.split('/'),
      target: d.target,
    }));
  }

  /** `path` is the raw (still percent-encoded) path after `api/`. */
  match(method: string, path: string): RestRouteMatch<T> {
    const segments = path.split('/');
    const allowed: string[] = [];
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (params === 'bad-encoding') return { kind: 'bad-encoding' };
      if (!params) continue;
      if (route.method === method) return { kind: 'matched', target: route.target, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}

function matchSegments(
  template: string[],
  actual: string[],
): Record<string, string> | undefined | 'bad-encoding' {
  if (template.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const expected = template[i]!;
    const segment = actual[i]!;
    if (expected.startsWith('{') && expected.endsWith('}')) {
      if (segment === '') return undefined;
      try {
        params[expected.slice(1, -1)] = decodeURIComponent(segment);
      } catch {
        return 'bad-encoding';
      }
    } else if (expected !== segment) {
      return undefined;
    }
  }
  return params;
}
