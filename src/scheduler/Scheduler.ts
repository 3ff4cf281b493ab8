import { setTimeout as sleep } from 'node:timers/promises';
import cron, { type ScheduledTask } from 'node-cron';
import { enqueueJob } from '../enqueue/enqueueJob.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import { slotOf } from '../model/parseSchedule.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';

/**
 * Recurring jobs: for each definition with a `schedule`, a node-cron task that enqueues one job
 * per tick. Any number of schedulers may run (the maintenance app on several hosts): the job's
 * idempotency key `<name>@<slot>` lets exactly one of them through, by the keys table's primary
 * key — node-cron itself has no distributed lock. Each enqueue waits a random jitter first so
 * that schedulers do not hit the primary in step.
 */
export class Scheduler {
  readonly #tasks: ScheduledTask[] = [];
  readonly #pending = new Set<Promise<void>>();
  #stopped = false;

  constructor(
    private readonly runtime: SluiceRuntime,
    private readonly definitions: readonly JobDefinition<any>[],
    private readonly jitterMs: number,
  ) {}

  /** The definitions this scheduler runs. */
  get scheduled(): readonly JobDefinition<any>[] {
    return this.definitions.filter((d) => d.schedule !== undefined);
  }

  start(): void {
    for (const definition of this.scheduled) {
      const task = cron.schedule(
        definition.schedule as string,
        (context) => this.#track(this.#tick(definition, context.date)),
        {
          name: `sluice-schedule-${definition.name}`,
          timezone: definition.timezone,
        },
      );
      this.#tasks.push(task);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#tasks.map((t) => t.destroy()));
    await Promise.all([...this.#pending]);
  }

  /** Enqueues the job of one tick (also callable directly, e.g. from tests). Returns whether this call won the slot. */
  async enqueueSlot(
    definition: JobDefinition<any>,
    tick: Date,
  ): Promise<{ slot: string; id: number; duplicate: boolean }> {
    const slot = slotOf(tick);
    const { id, duplicate } = await enqueueJob(this.runtime, {
      name: definition.name,
      queue: definition.queue ?? 'default',
      payload: { scheduledAt: slot },
      idempotencyKey: `${definition.name}@${slot}`,
    });
    this.runtime.events.emit('schedule:enqueued', { name: definition.name, slot, jobId: id, duplicate });
    return { slot, id, duplicate };
  }

  async #tick(definition: JobDefinition<any>, tick: Date): Promise<void> {
    await sleep(Math.random() * this.jitterMs);
    if (this.#stopped) return;
    try {
      await this.enqueueSlot(definition, tick);
    } catch (error) {
      this.runtime.events.emit('maintenance:error', {
        holder: 'scheduler',
        error: error as Error,
        context: `scheduling ${definition.name}`,
      });
    }
  }

  #track(promise: Promise<void>): void {
    this.#pending.add(promise);
    void promise.finally(() => this.#pending.delete(promise));
  }
}
