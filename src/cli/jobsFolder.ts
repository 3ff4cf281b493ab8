import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { JobDefinitionError } from '../errors.ts';
import { WORKER_DEFAULTS } from '../worker/workerOptions.ts';

/** Where job files come from, for `work` and `maintenance`: --jobs, else SLUICE_JOBS, else ./jobs. */
export const JOBS_FLAG_HELP = `--jobs DIR               folder of job files (.js/.mjs; .ts where Node strips types or a loader
                           is registered), resolved against the current folder
                           (default: SLUICE_JOBS, then ./${WORKER_DEFAULTS.jobs})`;

export interface JobsFolder {
  /** Absolute path. */
  readonly path: string;
  /** False when neither --jobs nor SLUICE_JOBS named it (the ./jobs default). */
  readonly explicit: boolean;
  readonly exists: boolean;
}

/** The jobs folder a command was given, resolved against the current folder. */
export function jobsFolder(flag: string | undefined): JobsFolder {
  const named = flag ?? (process.env.SLUICE_JOBS || undefined);
  const path = resolve(named ?? WORKER_DEFAULTS.jobs);
  let exists = false;
  try {
    exists = statSync(path).isDirectory();
  } catch {
    exists = false;
  }
  return { path, explicit: named !== undefined, exists };
}

/** The folder, or an error saying how to name one. */
export function requireJobsFolder(folder: JobsFolder): string {
  if (folder.exists) return folder.path;
  const how = folder.explicit ? '' : ' (give --jobs DIR or set SLUICE_JOBS)';
  throw new JobDefinitionError(folder.path, `is not a folder of job files${how}`);
}
