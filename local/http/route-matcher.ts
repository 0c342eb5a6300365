// Matches request paths against Functions route templates (`stream/{sessionId}/{id?}`, `files/{*path}`),
// the way the host does: case-insensitive literals, one segment per parameter, optional last parameters,
// and catch-all parameters.

export interface CompiledRoute<T> {
  template: string;
  methods: ReadonlySet<string>;
  target: T;
  pattern: RegExp;
  names: string[];
}

export type RouteMatch<T> =
  | { kind: 'matched'; target: T; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

const parameter = /^\{(\*?)([A-Za-z_][A-Za-z0-9_]*)(?::[^}?]*)?(\?)?\}$/;

export function compileRoute<T>(template: string, methods: readonly string[], target: T): CompiledRoute<T> {
  const names: string[] = [];
  let source = '';
  for (const segment of template.replace(/^\/+|\/+$/g, '').split('/')) {
    if (segment === '') continue;
    const match = parameter.exec(segment);
    if (!match) {
      source += '/' + escapeRegExp(segment);
      continue;
    }
    const [, catchAll, name, optional] = match;
    names.push(name!);
    if (catchAll) source += '(?:/(.*))?';
    else if (optional) source += '(?:/([^/]+))?';
    else source += '/([^/]+)';
  }
  return {
    template,
    methods: new Set(methods.map((method) => method.toUpperCase())),
    target,
    pattern: new RegExp(`^${source}/?$`, 'i'),
    names,
  };
}

export function matchRoute<T>(
  routes: readonly CompiledRoute<T>[],
  method: string,
  path: string,
): RouteMatch<T> {
  const allowed = new Set<string>();
  for (const route of routes) {
    const match = route.pattern.exec(path);
    if (!match) continue;
    if (!route.methods.has(method.toUpperCase())) {
      route.methods.forEach((m) => allowed.add(m));
      continue;
    }
    const params: Record<string, string> = {};
    route.names.forEach((name, index) => {
      const value = match[index + 1];
      if (value !== undefined) params[name] = decodeSegment(value);
    });
    return { kind: 'matched', target: route.target, params };
  }
  return allowed.size > 0
    ? { kind: 'method-not-allowed', allowed: [...allowed].sort() }
    : { kind: 'not-found' };
}

function decodeSegment(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
