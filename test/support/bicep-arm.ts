// Reads the ARM template the Bicep compiler makes of infra/main.bicep: its modules (nested deployments), where a
// module parameter's value comes from, which roles a module grants to whom, and the order its resources deploy in.

export interface ArmResource {
  type: string;
  name: string;
  condition?: string | boolean | undefined;
  copy?: { name: string; count: string | number; mode?: string; batchSize?: number };
  dependsOn?: string[] | undefined;
  properties?: Record<string, unknown>;
}

export interface ArmTemplate {
  parameters?: Record<string, unknown>;
  variables?: Record<string, unknown>;
  resources: ArmResource[];
  outputs?: Record<string, { type: string; value: unknown }>;
}

export interface ArmModule {
  name: string;
  condition?: string | boolean | undefined;
  /** Each parameter's binding, as the ARM text the compiler wrote (a `{ value }` object or a whole expression). */
  bindings: Record<string, string>;
  template: ArmTemplate;
}

/** The nested deployments of the main template, by deployment name; a module's own modules are not followed. */
export function modulesOf(main: ArmTemplate): Map<string, ArmModule> {
  const modules = new Map<string, ArmModule>();
  for (const resource of main.resources) {
    if (resource.type !== 'Microsoft.Resources/deployments') continue;
    const properties = resource.properties as {
      parameters: Record<string, unknown>;
      template: ArmTemplate;
    };
    const bindings = Object.fromEntries(
      Object.entries(properties.parameters).map(([name, binding]) => [
        name,
        typeof binding === 'object' && binding !== null && 'value' in binding
          ? JSON.stringify(binding.value)
          : JSON.stringify(binding),
      ]),
    );
    modules.set(resource.name, {
      name: resource.name,
      condition: resource.condition,
      bindings,
      template: properties.template,
    });
  }
  return modules;
}

/** Replaces each `variables('x')` of an expression by the variable's own text, until none is left. */
export function expandVariables(expression: string, variables: Record<string, unknown> = {}): string {
  let text = expression;
  for (let depth = 0; depth < 10 && /variables\('(\w+)'\)/.test(text); depth++)
    text = text.replace(/variables\('(\w+)'\)/g, (_, name: string) =>
      JSON.stringify(variables[name] ?? null),
    );
  return text;
}

/**
 * The modules a binding of the main template reads from: those whose outputs it references, and those whose `name`
 * parameter is bound to the very same expression (a name that main.bicep computes once and hands to both).
 */
export function sourceModules(binding: string, main: ArmTemplate, modules: Map<string, ArmModule>): string[] {
  const expanded = expandVariables(binding, main.variables);
  const found = new Set<string>();
  for (const match of expanded.matchAll(/'Microsoft\.Resources\/deployments', '([\w-]+)'\)/g))
    found.add(match[1]!);
  for (const module of modules.values()) {
    const name = module.bindings.name;
    if (name !== undefined && name === binding) found.add(module.name);
  }
  return [...found];
}

/** The parameters of a module's own template that an expression reads. */
export const parametersRead = (expression: string): string[] => [
  ...new Set([...expression.matchAll(/parameters\('(\w+)'\)/g)].map((match) => match[1]!)),
];

export interface Grant {
  /** Role definition ids (GUIDs) or, for an access policy, its name. */
  roles: string[];
  /** The expression of the principal it is granted to. */
  principal: string;
  type: string;
}

const GUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** What a module grants: Azure role assignments, Cosmos DB SQL role assignments and Redis access policies. */
export function grantsOf(template: ArmTemplate): Grant[] {
  return template.resources.flatMap((resource): Grant[] => {
    const properties = resource.properties ?? {};
    const type = resource.type;
    if (
      /^Microsoft\.(Authorization\/roleAssignments|DocumentDB\/databaseAccounts\/sqlRoleAssignments)$/i.test(
        type,
      )
    ) {
      const definition = expandVariables(JSON.stringify(properties.roleDefinitionId), template.variables);
      // A loop over a list of roles grants each of them.
      return [
        {
          type,
          roles: [...new Set(definition.match(GUID) ?? [])],
          principal: String(properties.principalId),
        },
      ];
    }
    if (/^Microsoft\.Cache\/redisEnterprise\/databases\/accessPolicyAssignments$/i.test(type)) {
      const user = properties.user as { objectId?: string } | undefined;
      return [{ type, roles: [String(properties.accessPolicyName)], principal: String(user?.objectId) }];
    }
    return [];
  });
}

/** The resources of a template each resource waits for, directly or through others (by index). */
export function dependencyClosure(template: ArmTemplate): Set<number>[] {
  const { resources } = template;
  const direct = resources.map((resource) =>
    (resource.dependsOn ?? []).flatMap((entry) =>
      resources.flatMap((other, index) => (refersTo(entry, other) ? [index] : [])),
    ),
  );
  return resources.map((_, start) => {
    const seen = new Set<number>();
    const stack = [...direct[start]!];
    while (stack.length > 0) {
      const next = stack.pop()!;
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...direct[next]!);
    }
    return seen;
  });
}

/** Whether a dependsOn entry names a resource: a loop by its copy name, others by resourceId() of their type. */
function refersTo(entry: string, resource: ArmResource): boolean {
  if (resource.copy && entry === resource.copy.name) return true;
  const match = /^\[resourceId\('([^']+)'/.exec(entry);
  return !resource.copy && match !== null && match[1]!.toLowerCase() === resource.type.toLowerCase();
}

/**
 * Resources of the given types that could deploy at the same time: two of them neither of which waits for the
 * other, or a loop that deploys its copies in parallel. Empty when they deploy strictly one after another.
 */
export function concurrentOperations(template: ArmTemplate, types: RegExp): string[] {
  const closure = dependencyClosure(template);
  const chosen = template.resources.flatMap((resource, index) => (types.test(resource.type) ? [index] : []));
  const label = (index: number) => {
    const resource = template.resources[index]!;
    return resource.copy ? `${resource.type} (loop ${resource.copy.name})` : resource.type;
  };
  const problems: string[] = [];
  for (const index of chosen) {
    const copy = template.resources[index]!.copy;
    if (copy && !(copy.mode === 'serial' && copy.batchSize === 1))
      problems.push(`${label(index)} deploys its copies in parallel (add @batchSize(1))`);
  }
  for (const [i, a] of chosen.entries())
    for (const b of chosen.slice(i + 1))
      if (!closure[a]!.has(b) && !closure[b]!.has(a))
        problems.push(`${label(a)} and ${label(b)} may deploy at the same time (add a dependsOn)`);
  return problems;
}
