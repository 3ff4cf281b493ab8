import { readdir } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineJob } from '../defineJob.ts';
import { JobDefinitionError } from '../errors.ts';
import type { JobDefinition } from '../types.ts';

const HANDLER_FILE = /^[A-Za-z0-9_.:-]+\.(ts|js|mjs)$/;

/**
 * The handlers a worker runs, by job name: from a list of definitions, or from a folder with one
 * file per job type (`jobs/<name>.ts`, `export default defineJob({ name: '<name>', … })`).
 */
export async function loadHandlers(source: string | readonly JobDefinition<any>[]): Promise<Map<string, JobDefinition<any>>> {
  const definitions = typeof source === 'string' ? await importFolder(source) : source.map((d) => defineJob(d));
  const byName = new Map<string, JobDefinition<any>>();
  for (const definition of definitions) {
    if (byName.has(definition.name)) throw new JobDefinitionError(`job "${definition.name}"`, 'is defined twice');
    byName.set(definition.name, definition);
  }
  return byName;
}

async function importFolder(folder: string): Promise<JobDefinition<any>[]> {
  const dir = resolve(folder);
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => HANDLER_FILE.test(f) && !f.endsWith('.d.ts') && !f.includes('.test.'));
  } catch (error) {
    throw new JobDefinitionError(dir, `cannot read the jobs folder: ${(error as Error).message}`);
  }
  const definitions: JobDefinition<any>[] = [];
  for (const file of files.sort()) {
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as { default?: JobDefinition<any> };
    const expected = basename(file, extname(file));
    if (!mod.default) throw new JobDefinitionError(join(dir, file), 'has no default export (export default defineJob({ … }))');
    const definition = defineJob(mod.default);
    if (definition.name !== expected) {
      throw new JobDefinitionError(join(dir, file), `defines job "${definition.name}"; a file's job must carry the file's name ("${expected}")`);
    }
    definitions.push(definition);
  }
  return definitions;
}
