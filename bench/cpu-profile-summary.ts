// Self time of a V8 CPU profile (node --cpu-prof) by package or source folder, the largest first:
// npx tsx bench/cpu-profile-summary.ts <file.cpuprofile> [rows] [--functions | --callers]
// (--callers: Node's own and native time charged to the nearest package or source frame that called it)
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** `@azure/cosmos`, `node:internal`, `local/cosmos`, `(garbage collector)`, ... */
export function bucketOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:' + (url.split(':')[1]?.split('/')[0] ?? '');
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? '?');
  }
  const path = url.replace(/^file:\/\//, '');
  const match = /\/(bench|functions|local|shared|test|scripts)\/(.*)$/.exec(path);
  if (!match) return path;
  const folders = match[2]!.split('/').slice(0, -1);
  return [match[1], ...folders.slice(0, 1)].join('/');
}

const [file, rowsArgument, mode] = process.argv.slice(2);
if (file === undefined)
  throw new Error('usage: cpu-profile-summary.ts <file.cpuprofile> [rows] [--functions | --callers]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, ProfileNode>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node);

/** The node itself, or with --callers its nearest ancestor that is neither Node's own code nor native. */
function charged(node: ProfileNode): ProfileNode {
  if (mode !== '--callers' || node.callFrame.functionName.startsWith('(')) return node;
  for (let at: ProfileNode | undefined = node; at; at = parentOf.get(at.id)) {
    const { url } = at.callFrame;
    if (url !== '' && !url.startsWith('node:')) return at;
  }
  return node;
}
const selfUs = new Map<string, number>();
let totalUs = 0;
profile.samples.forEach((id, index) => {
  const sampled = byId.get(id);
  if (!sampled) return;
  const node = charged(sampled);
  const delta = profile.timeDeltas[index] ?? 0;
  const { url, functionName, lineNumber } = node.callFrame;
  const key =
    mode === '--functions'
      ? `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/\/work\/[^/]+\/[^/]+\//, '')}:${lineNumber + 1}`
      : bucketOf(url, functionName);
  selfUs.set(key, (selfUs.get(key) ?? 0) + delta);
  totalUs += delta;
});
const idleUs = [...selfUs].filter(([key]) => key.startsWith('(idle)')).reduce((sum, [, us]) => sum + us, 0);
const busyUs = totalUs - idleUs;
console.log(`wall ${(totalUs / 1000).toFixed(0)} ms, busy ${(busyUs / 1000).toFixed(0)} ms`);
console.log('| self ms | % of busy | where |\n| ---: | ---: | --- |');
for (const [key, us] of [...selfUs].sort(([, a], [, b]) => b - a).slice(0, Number(rowsArgument ?? 25))) {
  if (key.startsWith('(idle)')) continue;
  console.log(`| ${(us / 1000).toFixed(0)} | ${((100 * us) / busyUs).toFixed(1)} | ${key} |`);
}
