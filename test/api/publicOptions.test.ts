import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  basicAuth,
  createSluice,
  defineJob,
  JobDefinitionError,
  JobValidationError,
  jobOf,
  OptionsError,
  RateLimitedError,
  type Sluice,
} from '../../src/index.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('public_options', { truncate: false });
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Every parameter of the public surface that takes an object (an options object, a filter, a
 * page, limits, a job): `call(param)`, from the types as an application sees them — the functions
 * src/index.ts exports, and every method of a Sluice and of its namespaces (the members whose type
 * is declared under src/api/). Arrays, dates, functions and async iterables are not objects of
 * options; a generic is judged by its constraint.
 */
function objectParameters(): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    `${ROOT}tsconfig.json`,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(String(d.messageText));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json unreadable');
  const index = `${ROOT}src/index.ts`;
  const program = ts.createProgram([index], config.options);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(index);
  if (!source) throw new Error('src/index.ts not in the program');
  const takesObject = (type: ts.Type): boolean =>
    (type.isUnion() ? type.types : [type]).some((part) => {
      if (part.flags & ts.TypeFlags.TypeParameter) {
        const constraint = checker.getBaseConstraintOfType(part);
        return constraint !== undefined && constraint !== part && takesObject(constraint);
      }
      if (!(part.flags & ts.TypeFlags.Object)) return false;
      if (checker.isArrayType(part) || checker.isTupleType(part)) return false;
      if (part.getCallSignatures().length > 0) return false;
      return !['Date', 'AsyncIterable'].includes(part.symbol?.name ?? '');
    });
  const found = new Set<string>();
  const addSignatures = (call: string, type: ts.Type, at: ts.Node) => {
    for (const signature of type.getCallSignatures()) {
      for (const parameter of signature.getParameters()) {
        if (takesObject(checker.getTypeOfSymbolAtLocation(parameter, at))) found.add(`${call}(${parameter.name})`);
      }
    }
  };
  const sluiceSymbol = checker.getExportsOfModule(checker.getSymbolAtLocation(source) as ts.Symbol);
  for (const exported of sluiceSymbol) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    if (symbol.flags & ts.SymbolFlags.Function || symbol.flags & ts.SymbolFlags.Variable) {
      addSignatures(exported.name, checker.getTypeOfSymbolAtLocation(symbol, source), source);
    }
    if (exported.name !== 'Sluice') continue;
    const instance = checker.getDeclaredTypeOfSymbol(symbol);
    for (const member of checker.getPropertiesOfType(instance)) {
      if (member.name.startsWith('#')) continue;
      const type = checker.getTypeOfSymbolAtLocation(member, source);
      const declaredUnderApi = (type.isIntersection() ? type.types : [type])
        .flatMap((t) => t.getSymbol()?.getDeclarations() ?? [])
        .some((d) => d.getSourceFile().fileName.includes('/src/api/'));
      if (declaredUnderApi) {
        addSignatures(`sluice.${member.name}`, type, source);
        for (const method of checker.getPropertiesOfType(type)) {
          addSignatures(
            `sluice.${member.name}.${method.name}`,
            checker.getTypeOfSymbolAtLocation(method, source),
            source,
          );
        }
      } else if (member.flags & ts.SymbolFlags.Method) {
        addSignatures(`sluice.${member.name}`, type, source);
      }
    }
  }
  return [...found].sort();
}

/** A call with a bad key: the error it must throw, naming the key, the call, and the name meant. */
interface Case {
  readonly run: (sluice: Sluice) => unknown;
  readonly error: typeof OptionsError | typeof JobValidationError | typeof JobDefinitionError;
  readonly text: readonly string[];
}

/** Parameters that take an object but no options: why each is checked elsewhere or has no keys. */
const NOT_OPTIONS: Record<string, string> = {
  'maskSecrets(job)': 'a payload mask: it receives a job, it is not called with options',
  'stopOnSignals(target)': 'a Worker or a Maintenance, not a bag of options',
  'jobOf(definition)': 'a job definition, made (and its fields checked) by defineJob',
  'sluice.enqueue(definition)': 'a job definition, made (and its fields checked) by defineJob',
};

const NO_JOB = { name: 'probe', payload: {} };

/** One bad key for every object parameter of the public surface (see objectParameters). */
const CASES: Record<string, Case> = {
  'createSluice(options)': {
    run: () => createSluice({ url: db.url, logger: testLogger, tablePrefx: 'x_' } as never),
    error: OptionsError,
    text: ['tablePrefx', 'createSluice', 'did you mean tablePrefix?'],
  },
  'defineJob(definition)': {
    run: () => defineJob({ name: 'd', retries: 3, handle() {} } as never),
    error: JobDefinitionError,
    text: ['retries', 'defineJob("d")', 'is not a field of a job definition'],
  },
  'jobOf(fields)': {
    run: () => jobOf(defineJob({ name: 'd', handle() {} }), {}, { priorty: 1 } as never),
    error: OptionsError,
    text: ['priorty', 'jobOf', 'did you mean priority?'],
  },
  'basicAuth(credentials)': {
    run: () => basicAuth({ user: 'a', pasword: 'b' } as never),
    error: OptionsError,
    text: ['pasword', 'basicAuth', 'did you mean password?'],
  },
  'sluice.enqueue(job)': {
    run: (s) => s.enqueue({ name: 'x', priorty: 1 } as never),
    error: JobValidationError,
    text: ['priorty', 'is not a job field', 'did you mean priority?'],
  },
  'sluice.enqueue(fields)': {
    run: (s) => s.enqueue(defineJob({ name: 'd', handle() {} }), {}, { dealyMs: 5 } as never),
    error: OptionsError,
    text: ['dealyMs', 'sluice.enqueue(definition, payload, fields)', 'did you mean delayMs?'],
  },
  'sluice.enqueue(options)': {
    run: (s) => s.enqueue(NO_JOB, { transaction: null } as never),
    error: OptionsError,
    text: ['transaction', 'sluice.enqueue', 'did you mean trx?'],
  },
  'sluice.enqueueBatch(options)': {
    run: (s) => s.enqueueBatch([NO_JOB], { transaction: null } as never),
    error: OptionsError,
    text: ['transaction', 'sluice.enqueueBatch', 'did you mean trx?'],
  },
  'sluice.enqueueStream(options)': {
    run: (s) =>
      s.enqueueStream(
        (async function* () {
          yield [NO_JOB];
        })(),
        { atomc: true } as never,
      ),
    error: OptionsError,
    text: ['atomc', 'sluice.enqueueStream', 'did you mean atomic?'],
  },
  'sluice.worker(options)': {
    run: (s) => s.worker({ concurency: 2 } as never),
    error: OptionsError,
    text: ['concurency', 'sluice.worker', 'did you mean concurrency?'],
  },
  'sluice.maintenance(options)': {
    run: (s) => s.maintenance({ schedul: '* * * * *' } as never),
    error: OptionsError,
    text: ['schedul', 'sluice.maintenance', 'did you mean schedule?'],
  },
  'sluice.dashboard(options)': {
    run: (s) => s.dashboard({ auth: false, readonly: true } as never),
    error: OptionsError,
    text: ['readonly', 'sluice.dashboard', 'did you mean readOnly?'],
  },
  'sluice.schedules.upsert(spec)': {
    run: (s) => s.schedules.upsert({ key: 'k', job: 'j', every: 60_000, mised: 'all' } as never),
    error: OptionsError,
    text: ['mised', 'sluice.schedules.upsert', 'did you mean missed?'],
  },
  'sluice.schedules.list(options)': {
    run: (s) => s.schedules.list({ limt: 5 } as never),
    error: OptionsError,
    text: ['limt', 'sluice.schedules.list', 'did you mean limit?'],
  },
  'sluice.schedules.runs(options)': {
    run: (s) => s.schedules.runs('k', { limt: 5 } as never),
    error: OptionsError,
    text: ['limt', 'sluice.schedules.runs', 'did you mean limit?'],
  },
  'sluice.jobs.list(filter)': {
    run: (s) => s.jobs.list({ queu: 'q' } as never),
    error: OptionsError,
    text: ['queu', 'sluice.jobs.list(filter)', 'did you mean queue?'],
  },
  'sluice.jobs.list(page)': {
    run: (s) => s.jobs.list({}, { limt: 5 } as never),
    error: OptionsError,
    text: ['limt', 'sluice.jobs.list(filter, page)', 'did you mean limit?'],
  },
  'sluice.jobs.findByKey(options)': {
    run: (s) => s.jobs.findByKey('k', { queu: 'q' } as never),
    error: OptionsError,
    text: ['queu', 'sluice.jobs.findByKey(key, options)', 'did you mean queue?'],
  },
  'sluice.jobs.search(filter)': {
    run: (s) => s.jobs.search({ nam: 'x' } as never, { path: 'a', equals: '1' }),
    error: OptionsError,
    text: ['nam', 'sluice.jobs.search(filter)', 'did you mean name?'],
  },
  'sluice.jobs.search(search)': {
    run: (s) => s.jobs.search({}, { path: 'a', equal: '1' } as never),
    error: OptionsError,
    text: ['equal', 'sluice.jobs.search(filter, search)', 'did you mean equals?'],
  },
  'sluice.jobs.count(filter)': {
    run: (s) => s.jobs.count({ stat: 'dead' } as never),
    error: OptionsError,
    text: ['stat', 'sluice.jobs.count(filter)', 'did you mean state?'],
  },
  'sluice.jobs.count(options)': {
    run: (s) => s.jobs.count({}, { maxx: 5 } as never),
    error: OptionsError,
    text: ['maxx', 'sluice.jobs.count(filter, options)', 'did you mean max?'],
  },
  'sluice.jobs.cancel(target)': {
    run: (s) => s.jobs.cancel({ queue: 'q', nam: 'x' } as never),
    error: OptionsError,
    text: ['nam', 'sluice.jobs.cancel(filter)', 'did you mean name?'],
  },
  'sluice.jobs.cancel(options)': {
    run: (s) => s.jobs.cancel({ queue: 'q' }, { batchSiz: 1 } as never),
    error: OptionsError,
    text: ['batchSiz', 'sluice.jobs.cancel(target, options)', 'did you mean batchSize?'],
  },
  'sluice.jobs.reschedule(when)': {
    run: (s) => s.jobs.reschedule([1], { delyMs: 5 } as never),
    error: OptionsError,
    text: ['delyMs', 'sluice.jobs.reschedule(ids, when)', 'did you mean delayMs?'],
  },
  'sluice.jobs.waitFor(options)': {
    run: (s) => s.jobs.waitFor(1, { timeout: 5 } as never),
    error: OptionsError,
    text: ['timeout', 'sluice.jobs.waitFor(id, options)', 'did you mean timeoutMs?'],
  },
  'sluice.jobs.changes(options)': {
    run: (s) => s.jobs.changes({ sinc: new Date() } as never),
    error: OptionsError,
    text: ['sinc', 'sluice.jobs.changes(options)', 'did you mean since?'],
  },
  'sluice.queues.list(options)': {
    run: (s) => s.queues.list({ mx: 5 } as never),
    error: OptionsError,
    text: ['mx', 'sluice.queues.list(options)', 'did you mean max?'],
  },
  'sluice.queues.depth(options)': {
    run: (s) => s.queues.depth({ qeues: ['q'] } as never),
    error: OptionsError,
    text: ['qeues', 'sluice.queues.depth(options)', 'did you mean queues?'],
  },
  'sluice.queues.setPromise(promise)': {
    run: (s) => s.queues.setPromise('q', { startWithin: 5 } as never),
    error: OptionsError,
    text: ['startWithin', 'sluice.queues.setPromise(queue, promise)', 'did you mean startWithinMs?'],
  },
  'sluice.queues.setLimits(limits)': {
    run: (s) => s.queues.setLimits('q', { concurency: 5 } as never),
    error: OptionsError,
    text: ['concurency', 'sluice.queues.setLimits(queue, limits)', 'did you mean concurrency?'],
  },
  'sluice.queues.setGroupLimits(limits)': {
    run: (s) => s.queues.setGroupLimits('q', 'g', { rat: null } as never),
    error: OptionsError,
    text: ['rat', 'sluice.queues.setGroupLimits(queue, group, limits)', 'did you mean rate?'],
  },
  'sluice.queues.groups(options)': {
    run: (s) => s.queues.groups('q', { afte: 'g' } as never),
    error: OptionsError,
    text: ['afte', 'sluice.queues.groups(queue, options)', 'did you mean after?'],
  },
  'sluice.queues.limits(options)': {
    run: (s) => s.queues.limits({ queue: ['q'] } as never),
    error: OptionsError,
    text: ['queue', 'sluice.queues.limits(options)', 'did you mean queues?'],
  },
  'sluice.queues.others(options)': {
    run: (s) => s.queues.others('q', { mx: 5 } as never),
    error: OptionsError,
    text: ['mx', 'sluice.queues.others(after, options)', 'did you mean max?'],
  },
  'sluice.queues.promises(options)': {
    run: (s) => s.queues.promises({ aftr: 'q' } as never),
    error: OptionsError,
    text: ['aftr', 'sluice.queues.promises(options)', 'did you mean after?'],
  },
  'sluice.queues.paused(options)': {
    run: (s) => s.queues.paused({ aftr: 'q' } as never),
    error: OptionsError,
    text: ['aftr', 'sluice.queues.paused(options)', 'did you mean after?'],
  },
  'sluice.queues.recordedDepth(options)': {
    run: (s) => s.queues.recordedDepth({ maxQueue: 5 } as never),
    error: OptionsError,
    text: ['maxQueue', 'sluice.queues.recordedDepth(options)', 'did you mean maxQueues?'],
  },
  'sluice.batches.list(page)': {
    run: (s) => s.batches.list({ befor: 5 } as never),
    error: OptionsError,
    text: ['befor', 'sluice.batches.list(page)', 'did you mean before?'],
  },
  'sluice.batches.graph(page)': {
    run: (s) => s.batches.graph(1, { limt: 5 } as never),
    error: OptionsError,
    text: ['limt', 'sluice.batches.graph(batchId, page)', 'did you mean limit?'],
  },
  'sluice.deadJobs.list(filter)': {
    run: (s) => s.deadJobs.list({ errorcode: 'E' } as never),
    error: OptionsError,
    text: ['errorcode', 'sluice.deadJobs.list(filter)', 'did you mean errorCode?'],
  },
  'sluice.deadJobs.list(page)': {
    run: (s) => s.deadJobs.list({}, { afterid: 5 } as never),
    error: OptionsError,
    text: ['afterid', 'sluice.deadJobs.list(filter, page)', 'did you mean afterId?'],
  },
  'sluice.deadJobs.redrive(filter)': {
    run: (s) => s.deadJobs.redrive({ queue: 'q', id: [1] } as never),
    error: OptionsError,
    text: ['id', 'sluice.deadJobs.redrive(filter)', 'did you mean ids?'],
  },
  'sluice.deadJobs.redrive(options)': {
    run: (s) => s.deadJobs.redrive({ queue: 'q' }, { batchsize: 1 } as never),
    error: OptionsError,
    text: ['batchsize', 'sluice.deadJobs.redrive(filter, options)', 'did you mean batchSize?'],
  },
  'sluice.deadJobs.groups(options)': {
    run: (s) => s.deadJobs.groups({ limti: 5 } as never),
    error: OptionsError,
    text: ['limti', 'sluice.deadJobs.groups(options)', 'did you mean limit?'],
  },
  'sluice.deadJobs.purge(filter)': {
    run: (s) => s.deadJobs.purge({ queue: 'q', olderThan: 5 } as never),
    error: OptionsError,
    text: ['olderThan', 'sluice.deadJobs.purge(filter)', 'did you mean olderThanMs?'],
  },
  'sluice.deadJobs.purge(options)': {
    run: (s) => s.deadJobs.purge({ queue: 'q' }, { batch: 1 } as never),
    error: OptionsError,
    text: ['batch', 'sluice.deadJobs.purge(filter, options)'],
  },
  'sluice.workers.list(options)': {
    run: (s) => s.workers.list({ metric: true } as never),
    error: OptionsError,
    text: ['metric', 'sluice.workers.list(options)', 'did you mean metrics?'],
  },
  'sluice.history.throughput(options)': {
    run: (s) => s.history.throughput({ bucket: 5 } as never),
    error: OptionsError,
    text: ['bucket', 'sluice.history.throughput(options)', 'did you mean buckets?'],
  },
  'sluice.batches.finishedGraph(options)': {
    run: (s) => s.batches.finishedGraph(1, { limt: 5 } as never),
    error: OptionsError,
    text: ['limt', 'sluice.batches.finishedGraph(batchId, options)', 'did you mean limit?'],
  },
  'sluice.history.timings(options)': {
    run: (s) => s.history.timings({ queue: 'q', nam: 'x' } as never),
    error: OptionsError,
    text: ['nam', 'sluice.history.timings(options)', 'did you mean name?'],
  },
  'sluice.history.perQueue(options)': {
    run: (s) => s.history.perQueue({ windowSeconds: 60, maxRow: 5 } as never),
    error: OptionsError,
    text: ['maxRow', 'sluice.history.perQueue(options)', 'did you mean maxRows?'],
  },
  'sluice.settings.set(values)': {
    run: (s) => s.settings.set({ historyRetention: 5 } as never),
    error: OptionsError,
    text: ['historyRetention', 'sluice.settings.set(values)', 'did you mean historyRetentionMs?'],
  },
};

/** Objects inside options: each refused by the same check, naming the key. */
const NESTED: Record<string, Case> = {
  'new RateLimitedError(retryAfterMs, options)': {
    run: () => new RateLimitedError(1_000, { puase: 'queue' } as never),
    error: OptionsError,
    text: ['puase', 'new RateLimitedError(retryAfterMs, options)', 'did you mean pause?'],
  },
  'new RateLimitedError(retryAfterMs, options.pause)': {
    run: () => new RateLimitedError(1_000, { pause: 'queues' } as never),
    error: OptionsError,
    text: ['pause', "must be 'queue' or 'group'", '"queues"'],
  },
  'sluice.queues.setLimits(limits.rate)': {
    run: (s) => s.queues.setLimits('q', { rate: { limit: 5, interval: 1000 } } as never),
    error: OptionsError,
    text: ['interval', 'rate', 'did you mean intervalMs?'],
  },
  'sluice.queues.setGroupLimits(limits.rate)': {
    run: (s) => s.queues.setGroupLimits('q', 'g', { rate: { limit: 5, intervalMS: 1000 } } as never),
    error: OptionsError,
    text: ['intervalMS', 'rate', 'did you mean intervalMs?'],
  },
  'sluice.worker(options.loadPolicy)': {
    run: (s) => s.worker({ loadPolicy: { minFreeMemory: 0.1 } } as never),
    error: OptionsError,
    text: ['minFreeMemory', 'sluice.worker loadPolicy', 'did you mean minFreeMem?'],
  },
};

/** Every sluice table's checksum: what "nothing was written" compares. */
async function snapshot(): Promise<string> {
  const tables = await db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name`,
  );
  const sums = await db.query<{ Table: string; Checksum: number }>(
    `CHECKSUM TABLE ${tables.map((t) => `\`${t.name}\``).join(', ')}`,
  );
  return JSON.stringify(sums.map((s) => [s.Table.split('.').pop(), String(s.Checksum)]));
}

describe('every public options object refuses a key it does not know', () => {
  beforeAll(async () => {
    // Something for every write to change, had it ignored its bad key: a live job, a dead one.
    await db.sluice.enqueueBatch([{ name: 'live', queue: 'q' }]);
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at)
       VALUES (999, 'q', 'dead', '{}', 0, 3, 3, 'boom', NOW(3) - INTERVAL 1 HOUR, NOW(3) - INTERVAL 1 HOUR)`,
    );
  });

  it('the table covers every object parameter of the public surface, and no other', () => {
    const covered = [...Object.keys(CASES), ...Object.keys(NOT_OPTIONS)].sort();
    expect(objectParameters()).toEqual(covered);
  }, 120_000);

  for (const [call, c] of Object.entries({ ...CASES, ...NESTED })) {
    it(`${call}: refused with the key, the call and the name meant; nothing written`, async () => {
      const before = await snapshot();
      const error = await Promise.resolve()
        .then(() => c.run(db.sluice))
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(error, `${call} accepted a bad key`).toBeInstanceOf(c.error);
      for (const text of c.text) expect((error as Error).message).toContain(text);
      expect(await snapshot()).toBe(before);
    });
  }
});

describe('the outbox: a knex transaction passed where the options go', () => {
  const send = defineJob({ name: 'send', handle() {} });

  beforeAll(async () => {
    await db.query('CREATE TABLE IF NOT EXISTS app_orders (id INT PRIMARY KEY)');
  });

  const cases: Record<string, (s: Sluice, trx: never) => Promise<unknown>> = {
    'enqueueBatch(jobs, { transaction: trx })': (s, trx) =>
      s.enqueueBatch([jobOf(send, {})], { transaction: trx } as never),
    'enqueue(job, trx)': (s, trx) => s.enqueue({ name: 'send' }, trx),
    'enqueue(definition, payload, trx)': (s, trx) => s.enqueue(send, {}, trx),
    'enqueueBatch(jobs, trx)': (s, trx) => s.enqueueBatch([{ name: 'send' }], trx),
  };
  for (const [shape, enqueue] of Object.entries(cases)) {
    it(`${shape}: refused (did you mean trx?); the business row rolls back and no job is written`, async () => {
      await db.query('DELETE FROM app_orders');
      const error = await db.sluice.knex
        .transaction(async (trx) => {
          await trx('app_orders').insert({ id: 1 });
          await enqueue(db.sluice, trx as never);
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(error, `${shape} was accepted`).toBeInstanceOf(OptionsError);
      expect((error as Error).message).toContain('did you mean trx?');
      expect((error as Error).message).toContain('sluice.enqueue');
      expect(await db.query('SELECT id FROM app_orders')).toEqual([]);
      expect(await db.query("SELECT id FROM sluice_jobs WHERE name = 'send'")).toEqual([]);
    });
  }
});
