import { readdir } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { JobDefinitionError, OptionsError } from '../errors.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import { defineJob } from '../model/defineJob.ts';

const HANDLER_FILE = /^[A-Za-z0-9_.:-]+\.(ts|mts|js|mjs|cjs)$/;
const DECLARATION_FILE = /\.d\.[cm]?ts$/;

/**
 * The handlers a worker runs, by job name: from a list of definitions, or from a folder with one
 * file per job type (`jobs/<name>.js`, .mjs, .cjs, or .ts where Node can load it;
 * `export default defineJob({ name: '<name>', … })`).
 */
export async function loadHandlers(
  source: string | readonly JobDefinition<any>[],
): Promise<Map<string, JobDefinition<any>>> {
  const definitions = typeof source === 'string' ? await importFolder(source) : source.map((d) => defineJob(d));
  const byName = new Map<string, JobDefinition<any>>();
  for (const definition of definitions) {
    if (byName.has(definition.name)) throw new JobDefinitionError(`job "${definition.name}"`, 'is defined twice');
    byName.set(definition.name, definition);
  }
  return byName;
}

/** Most entries of an empty jobs folder that its error names. */
const LISTED_ENTRIES = 10;

/**
 * A worker runs no job it does not know (it gives such jobs back): with no job types at all it
 * would run nothing. Throws JobDefinitionError naming the folder and what it holds instead (the
 * first entries, in name order: a tsc that never wrote dist/jobs, .ts files a Node cannot load, a
 * wrong folder), or OptionsError for an empty list of definitions.
 */
export async function assertHasHandlers(
  source: string | readonly JobDefinition<any>[],
  handlers: ReadonlyMap<string, JobDefinition<any>>,
): Promise<void> {
  if (handlers.size > 0) return;
  if (typeof source !== 'string') throw new OptionsError('jobs', 'is an empty list: a worker needs at least one job');
  const dir = resolve(source);
  const entries = (await readdir(dir).catch(() => [] as string[])).sort();
  const found =
    entries.length === 0
      ? 'it is empty'
      : `it holds ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}, none a job file: ${entries
          .slice(0, LISTED_ENTRIES)
          .join(', ')}${entries.length > LISTED_ENTRIES ? ', …' : ''}`;
  throw new JobDefinitionError(
    dir,
    `has no job files (<name>.js, .mjs, .cjs, or .ts where Node loads it): ${found}. ` +
      'A worker with no job types would run nothing; is it the right folder, and were the jobs compiled?',
  );
}

async function importFolder(folder: string): Promise<JobDefinition<any>[]> {
  const dir = resolve(folder);
  let files: string[];
  try {
    files = (await readdir(dir)).filter(
      (f) => HANDLER_FILE.test(f) && !DECLARATION_FILE.test(f) && !f.includes('.test.'),
    );
  } catch (error) {
    throw new JobDefinitionError(dir, `cannot read the jobs folder: ${(error as Error).message}`);
  }
  const byName = new Map<string, string>();
  for (const file of files.sort()) {
    const other = byName.get(basename(file, extname(file)));
    if (other) throw new JobDefinitionError(join(dir, file), `and ${other} define the same job: keep one of them`);
    byName.set(basename(file, extname(file)), file);
  }
  const definitions: JobDefinition<any>[] = [];
  for (const file of files) {
    const mod = await importJobFile(join(dir, file));
    const expected = basename(file, extname(file));
    if (!mod.default)
      throw new JobDefinitionError(join(dir, file), 'has no default export (export default defineJob({ … }))');
    const definition = defineJob(mod.default);
    if (definition.name !== expected) {
      throw new JobDefinitionError(
        join(dir, file),
        `defines job "${definition.name}"; a file's job must carry the file's name ("${expected}")`,
      );
    }
    definitions.push(definition);
  }
  return definitions;
}

/**
 * Imports one job file. A .ts file needs a Node that strips types (22.18+ and 23.6+ by default,
 * 22.6+ with --experimental-strip-types) or a registered loader (node --import tsx); without one
 * the error says so, instead of Node's ERR_UNKNOWN_FILE_EXTENSION.
 */
async function importJobFile(path: string): Promise<{ default?: JobDefinition<any> }> {
  try {
    return (await import(pathToFileURL(path).href)) as { default?: JobDefinition<any> };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.m?ts$/.test(path)) {
      throw new JobDefinitionError(
        path,
        `is TypeScript, which this Node (${process.version}) does not load by itself: compile your jobs to .js, ` +
          'use Node 22.18+ or 23.6+ (they strip types; 22.6+ with --experimental-strip-types), or register a loader (node --import tsx)',
        { cause: error },
      );
    }
    throw new JobDefinitionError(path, `could not be loaded: ${(error as Error).message.split('\n')[0]}`, {
      cause: error,
    });
  }
}
