// azd's rules for this project, as its source (Azure/azure-dev, cli/azd) has them: the order `azd up` runs its
// steps in, which hooks run with provisioning outputs, and which files of a function app's `dist` it zips.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';

interface HookCommand {
  shell?: string;
  run: string;
}
type Hook = HookCommand & { posix?: HookCommand; windows?: HookCommand };

export interface AzdService {
  name: string;
  project: string;
  language: string;
  host: string;
  dist?: string;
  remoteBuild?: boolean;
  hooks?: Record<string, Hook>;
}

export interface AzdProject {
  requiredVersions?: { azd?: string };
  workflows?: { up?: unknown };
  hooks?: Record<string, Hook>;
  services: AzdService[];
}

export function readAzdProject(file: string): AzdProject {
  const raw = parse(readFileSync(file, 'utf8')) as Omit<AzdProject, 'services'> & {
    services: Record<string, Omit<AzdService, 'name'>>;
  };
  return {
    ...raw,
    // azd keeps the services in the order azure.yaml lists them.
    services: Object.entries(raw.services).map(([name, service]) => ({ name, ...service })),
  };
}

/**
 * The azd commands `azd up` runs: `workflows.up`'s steps (a list, or `{ steps }`; each `azd:` a string split on
 * spaces or `{ args }`), else azd's own: package, provision, deploy (cmd/up.go; since the execution graph, packaging
 * may even overlap provisioning, so a package step never sees provisioning outputs).
 */
export function upSteps(project: AzdProject): string[][] {
  const up = project.workflows?.up;
  if (up === undefined) return [['package', '--all'], ['provision'], ['deploy', '--all']];
  const steps = (Array.isArray(up) ? up : (up as { steps?: unknown }).steps) as
    { azd: unknown }[] | undefined;
  if (!Array.isArray(steps) || steps.length === 0)
    throw new Error('workflows.up must be a list of steps or { steps: [...] }');
  return steps.map(({ azd }) =>
    typeof azd === 'string' ? azd.split(' ') : ((azd as { args: string[] }).args ?? []),
  );
}

export interface PlannedHook {
  service: string;
  event: 'prepackage';
  command: string;
  /** Whether a `provision` step ran before: only then are infra/main.bicep's outputs in the hook's environment. */
  afterProvision: boolean;
}

/**
 * The service `prepackage` hooks in the order the steps run them. `package` packages the named or every service;
 * `deploy` packages what was not packaged yet (azd caches each service's package for the whole run, so a service
 * packaged once is not packaged, nor its hooks run, again).
 */
export function prepackageHooks(project: AzdProject, steps: readonly string[][]): PlannedHook[] {
  const planned: PlannedHook[] = [];
  const packaged = new Set<string>();
  let provisioned = false;
  for (const [command, ...args] of steps) {
    if (command === 'provision') provisioned = true;
    if (command !== 'package' && command !== 'deploy') continue;
    const named = args.filter((arg) => !arg.startsWith('-'));
    const services = args.includes('--all')
      ? project.services
      : project.services.filter((service) => named.includes(service.name));
    for (const service of services) {
      if (packaged.has(service.name)) continue;
      packaged.add(service.name);
      const hook = service.hooks?.prepackage;
      if (hook === undefined) continue;
      const run = hook.posix?.run ?? hook.run;
      planned.push({ service: service.name, event: 'prepackage', command: run, afterProvision: provisioned });
    }
  }
  return planned;
}

/** Stand-in values of every output infra/main.bicep declares: an https URL for a URI or endpoint. */
export function standInOutputs(mainBicep: string): Record<string, string> {
  const known: Record<string, string> = { DURABLE_TASK_BACKEND: 'azure-storage', AUTH_MODE: 'entra' };
  const outputs: Record<string, string> = {};
  for (const [, name, type] of mainBicep.matchAll(/^output (\w+) (\w+) =/gm)) {
    if (name === undefined) continue;
    outputs[name] =
      known[name] ??
      (type === 'bool'
        ? 'true'
        : /_(URI|ENDPOINT)$/.test(name)
          ? `https://${name.toLowerCase().replaceAll('_', '-')}.example.net`
          : `stand-in-${name.toLowerCase()}`);
  }
  return outputs;
}

/**
 * Whether azd deploys a JavaScript/TypeScript function app with a remote build, or refuses the service: it reads the
 * `.funcignore` of the service's project folder (not of its `dist`) and refuses `remoteBuild: false` when that file
 * leaves node_modules out, and `remoteBuild: true` when it keeps it (pkg/project/service_target_functionapp.go,
 * resolveFunctionAppRemoteBuild, from 1.23.12).
 */
export function remoteBuildDecision(projectDir: string, remoteBuild: boolean | undefined): boolean | Error {
  const ignoreFile = path.join(projectDir, '.funcignore');
  if (!existsSync(ignoreFile)) return remoteBuild ?? true;
  const nodeModulesExcluded = ignoredBy(ignoreFile, ['node_modules/']).size > 0;
  if (remoteBuild === undefined) return nodeModulesExcluded;
  if (remoteBuild && !nodeModulesExcluded)
    return new Error("'remoteBuild: true' requires '.funcignore' to exclude node_modules");
  if (!remoteBuild && nodeModulesExcluded)
    return new Error("'remoteBuild: false' cannot be used when '.funcignore' excludes node_modules");
  return remoteBuild;
}

/** Which of `paths` (relative, folders ending in `/`) a gitignore-syntax file leaves out, by git's own matcher. */
export function ignoredBy(ignoreFile: string, paths: readonly string[]): Set<string> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'azd-ignore-'));
  try {
    execFileSync('git', ['init', '-q', scratch]);
    const output = execFileSync(
      'git',
      ['-c', `core.excludesFile=${ignoreFile}`, 'check-ignore', '--no-index', '--stdin'],
      { cwd: scratch, input: paths.join('\n'), encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] },
    );
    return new Set(output.split('\n').filter(Boolean));
  } catch (error) {
    // check-ignore exits 1 when none of the paths is ignored: an answer, not a failure.
    if ((error as { status?: number }).status === 1) return new Set();
    throw error;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The files azd puts in a function app's zip of `dist` (pkg/project/project_utils.go, createDeployableZip): never
 * a `.azure` folder, the `.funcignore` file or `local.settings.json`; then what `dist`'s own `.funcignore` leaves
 * out, or without one, node_modules unless `remoteBuild: false`. Files under a left-out folder are left out with it.
 */
export function zippedFiles(dist: string, service: Pick<AzdService, 'language' | 'remoteBuild'>): string[] {
  const all: { rel: string; isDir: boolean }[] = [];
  for (const entry of readdirSync(dist, { withFileTypes: true, recursive: true })) {
    const rel = path.relative(dist, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    all.push({ rel, isDir: entry.isDirectory() });
  }
  const ignoreFile = path.join(dist, '.funcignore');
  const byFile = existsSync(ignoreFile)
    ? ignoredBy(
        ignoreFile,
        all.map(({ rel, isDir }) => (isDir ? `${rel}/` : rel)),
      )
    : undefined;
  const node = service.language === 'ts' || service.language === 'js';
  const leftOut = ({ rel, isDir }: { rel: string; isDir: boolean }) => {
    const name = rel.slice(rel.lastIndexOf('/') + 1);
    if (isDir && name === '.azure') return true;
    if (!isDir && (name === '.funcignore' || name === 'local.settings.json')) return true;
    if (byFile !== undefined) return byFile.has(isDir ? `${rel}/` : rel);
    return node && isDir && name === 'node_modules' && service.remoteBuild !== false;
  };
  const outFolders = all.filter((entry) => entry.isDir && leftOut(entry)).map(({ rel }) => `${rel}/`);
  return all
    .filter((entry) => !entry.isDir && !leftOut(entry))
    .filter(({ rel }) => !outFolders.some((folder) => rel.startsWith(folder)))
    .map(({ rel }) => rel)
    .sort();
}
