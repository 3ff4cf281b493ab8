import type { TestProject } from 'vitest/node';
import { hasContainerRuntime, type ServerInUse, serverOrThrowaway } from '../src/demo/server/serverOrThrowaway.ts';
import { provideSpawnBuild } from './helpers/spawnBuild.ts';
import { createTemplateDatabase } from './helpers/templateDatabase.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A server URL whose user may CREATE/DROP DATABASE; each test file makes its own database. */
    mysqlUrl: string;
    /** A database on that server migrated once for the run, which each file copies (templateDatabase.ts). */
    templateDatabase: string;
  }
}

const LOCAL_DEFAULT = 'mysql://root@127.0.0.1:3306/test';

/**
 * Finds the server the suite runs against, in this order:
 * 1. MYSQL_URL, if set;
 * 2. MySQL 8 in a container via testcontainers, where a container runtime exists;
 * 3. the local default server.
 * When nothing answers at the URL of 1 or 3, it falls back as `sluice demo` does
 * (serverOrThrowaway): MySQL 8 through testcontainers, else a throwaway mariadbd/mysqld from this
 * machine's binaries, removed after the run. A server that answers but refuses us fails the run;
 * so does finding no server at all, with one line on how to point the suite at one. Never skips.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const say = (line: string) => process.stderr.write(`[sluice tests] ${line}\n`);
  let server: ServerInUse;
  if (process.env.MYSQL_URL) server = await serverOrThrowaway(process.env.MYSQL_URL, say);
  else if (hasContainerRuntime()) server = await mysqlContainer(say);
  else server = await serverOrThrowaway(LOCAL_DEFAULT, say);
  if (server.started) say(`running against ${server.started}`);
  project.provide('mysqlUrl', server.url);
  const template = await createTemplateDatabase(server.url);
  project.provide('templateDatabase', template.name);
  const removeBuild = await provideSpawnBuild(project);
  return async () => {
    removeBuild();
    await template.drop();
    await server.stop();
  };
}

async function mysqlContainer(say: (line: string) => void): Promise<ServerInUse> {
  say('starting MySQL 8.0 in a container (testcontainers)');
  const { MySqlContainer } = await import('@testcontainers/mysql');
  const container = await new MySqlContainer('mysql:8.0').withRootPassword('sluice').start();
  return {
    url: `mysql://root:sluice@${container.getHost()}:${container.getPort()}/test`,
    started: 'MySQL 8.0 in a container (testcontainers)',
    stop: async () => {
      await container.stop();
    },
  };
}
