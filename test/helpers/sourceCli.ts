import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

/** The repo's root: child processes run here unless a test says otherwise. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Node arguments that run the `sluice` command from the TypeScript sources, as `npm run sluice`
 * does, from any working folder: tsx loads .ts, and the `sluice-source` condition makes job files' `import … from 'sluice'`
 * resolve to src/index.ts (the same modules the command runs), not to a build in dist/.
 */
export const SOURCE_CLI: readonly string[] = [
  '--import',
  fileURLToPath(new URL('./registerTsx.mjs', import.meta.url)),
  '--conditions=sluice-source',
  fileURLToPath(new URL('../../src/cli/sluice.ts', import.meta.url)),
];

/** The commands that load a folder of job files (--jobs, else SLUICE_JOBS, else ./jobs). */
const LOADS_JOBS = new Set(['work', 'maintenance', 'dashboard', 'schedules']);

/**
 * Node arguments for `sluice <args>` run in `cwd`: the run's transpiled sources (spawnBuild.ts),
 * with a --jobs folder of test/fixtures/ pointed at its transpiled copy, when every job file the
 * command loads is in that build; otherwise SOURCE_CLI with `args` as they are.
 */
export function cliArgs(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): string[] {
  const build = builtSources();
  if (build === null) return [...SOURCE_CLI, ...args];
  const command = args.find((a) => !a.startsWith('-'));
  const out = [...args];
  if (command !== undefined && LOADS_JOBS.has(command)) {
    const at = out.findIndex((a) => a === '--jobs' || a.startsWith('--jobs='));
    const given = at < 0 ? undefined : out[at] === '--jobs' ? out[at + 1] : out[at]?.slice('--jobs='.length);
    const folder = resolve(cwd, given ?? env.SLUICE_JOBS ?? 'jobs');
    const inFixtures = relative(join(ROOT, 'test', 'fixtures'), folder);
    if (given !== undefined && !inFixtures.startsWith('..') && !inFixtures.startsWith(sep)) {
      const mapped = join(build, 'test', 'fixtures', inFixtures);
      if (out[at] === '--jobs') out[at + 1] = mapped;
      else out[at] = `--jobs=${mapped}`;
    } else if (hasTypeScript(folder)) return [...SOURCE_CLI, ...args];
  }
  return [join(build, 'src', 'cli', 'sluice.js'), ...out];
}

/** The transpiled sources of this run, or null (a helper used outside a vitest run with the globalSetup). */
function builtSources(): string | null {
  try {
    return inject('spawnBuild') ?? null;
  } catch {
    return null;
  }
}

function hasTypeScript(folder: string): boolean {
  if (!existsSync(folder)) return false;
  return readdirSync(folder, { recursive: true }).some((f) => String(f).endsWith('.ts'));
}
