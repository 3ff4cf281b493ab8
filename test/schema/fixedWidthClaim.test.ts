import { describe, expect, it } from 'vitest';
import * as fixedWidthClaim from '../../migrations/202611230300_fixed_width_claim.ts';
import * as narrowLockId from '../../migrations/202611250101_narrow_lock_id.ts';
import { fromKnex } from '../../src/db/executor.ts';
import { SchemaVersionError } from '../../src/errors.ts';
import { claimKeyOf, LOCK_ID_WIDTH, workerKeyOf } from '../../src/model/claimKey.ts';
import { ClaimTokens } from '../../src/worker/ClaimTokens.ts';
import { claimRandomHead } from '../../src/worker/claims/claimRandomHead.ts';
import { completeJobs } from '../../src/worker/claims/completeJobs.ts';
import { releaseClaims } from '../../src/worker/claims/releaseClaims.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('fixed_width_claim');
const NO_CLAIM = '1970-01-01 00:00:01.000';

describe('fixed-width claim (lock_id CHAR(24) ascii, locked_at never NULL)', () => {
  it('a lock_id is the worker’s claim key and a sequence, and fits the column; the worker id carries host, pid and the key', () => {
    const prefix = ClaimTokens.prefixFor(`${'höst-ñame.'.repeat(20)}\tend`, 4_194_304);
    expect(prefix).toMatch(/^[\x21-\x7e]+$/);
    expect(prefix).toBe(`${'höst-ñame.'.repeat(4).replace(/[öñ]/g, '_')}-4194304`);
    expect(ClaimTokens.prefixFor('worker-1', 42)).toBe('worker-1-42');

    const tokens = new ClaimTokens(prefix);
    const key = workerKeyOf(tokens.workerId);
    expect(key).toMatch(/^[0-9a-z]{13}$/);
    expect(tokens.workerId).toBe(`${prefix}~${key}`);
    expect([tokens.next(), tokens.next()]).toEqual([`${key}.1`, `${key}.2`]);
    expect(claimKeyOf(tokens.next())).toBe(key);
    expect(`${key}.${'z'.repeat(10)}`.length).toBeLessThanOrEqual(LOCK_ID_WIDTH);
    expect(workerKeyOf(new ClaimTokens(prefix).workerId)).not.toBe(key);
    // An id that cannot end a lock_id's key carries none.
    expect(workerKeyOf('host-7~ab.cd')).toBeNull();
    expect(workerKeyOf('höst-7~')).toBeNull();
  });

  it('the column is as wide as the tokens: a claim with the widest host is stored, fenced and released exactly', async () => {
    const [column] = await db.query<{ len: number; cs: string }>(
      "SELECT CHARACTER_MAXIMUM_LENGTH AS len, CHARACTER_SET_NAME AS cs FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'sluice_jobs' AND column_name = 'lock_id'",
    );
    expect(column).toEqual({ len: LOCK_ID_WIDTH, cs: 'ascii' });

    await db.sluice.enqueueBatch(Array.from({ length: 3 }, (_, n) => ({ name: 'work', payload: { n } })));
    const exec = fromKnex(db.sluice.knex);
    const tokens = new ClaimTokens(ClaimTokens.prefixFor('h'.repeat(300), 4_194_304));
    const lockId = tokens.next();
    const rows = await claimRandomHead(exec, db.sluice.tables, {
      queue: 'default',
      priorities: [0],
      want: 3,
      lockId,
      headSize: 10,
    });
    expect(rows.map((r) => r.lock_id)).toEqual([lockId, lockId, lockId]);
    const ids = rows.map((r) => Number(r.id));

    // Fenced on the exact token: one that differs in its last character matches nothing.
    await expect(releaseClaims(exec, db.sluice.tables, `${lockId.slice(0, -1)}x`, ids)).resolves.toBe(0);
    await expect(releaseClaims(exec, db.sluice.tables, lockId, [ids[0] as number])).resolves.toBe(1);
    const [free] = await db.query<{ lock_id: string; locked_at: string }>(
      "SELECT lock_id, DATE_FORMAT(locked_at, '%Y-%m-%d %H:%i:%s.%f') AS locked_at FROM sluice_jobs WHERE id = ?",
      [ids[0]],
    );
    expect(free).toEqual({ lock_id: '', locked_at: '1970-01-01 00:00:01.000000' });
    await completeJobs(exec, db.sluice.tables, lockId, ids.slice(1), { history: true });
    expect(await db.query("SELECT id FROM sluice_jobs WHERE lock_id = ''")).toHaveLength(1);
    expect(await db.query('SELECT id FROM sluice_jobs')).toHaveLength(1);
  });

  it('upgrades a live table without walking it: claims keep lock_id and locked_at, free rows keep NULL; a worker of the previous version can still release', async () => {
    const tables = db.sluice.tables;
    await fixedWidthClaim.down(db.sluice.knex, tables);
    try {
      await db.query(
        "INSERT INTO sluice_jobs (queue, name, payload, run_at, locked_at) VALUES ('default', 'free', '{}', NOW(3), NULL)",
      );
      await db.query(
        "INSERT INTO sluice_jobs (queue, name, payload, run_at, lock_id, locked_at) VALUES ('default', 'held', '{}', NOW(3), 'old-host-7~abcdef01.1', '2026-11-23 10:00:00.123')",
      );
      await fixedWidthClaim.up(db.sluice.knex, tables);
      const read = () =>
        db.query<{ name: string; lock_id: string; locked_at: string | null }>(
          "SELECT name, lock_id, DATE_FORMAT(locked_at, '%Y-%m-%d %H:%i:%s.%f') AS locked_at FROM sluice_jobs ORDER BY id",
        );
      expect(await read()).toEqual([
        { name: 'free', lock_id: '', locked_at: null },
        { name: 'held', lock_id: 'old-host-7~abcdef01.1', locked_at: '2026-11-23 10:00:00.123000' },
      ]);
      // The previous version's release (locked_at = NULL) still works during a rolling upgrade.
      await db.query(
        "UPDATE sluice_jobs SET lock_id = '', locked_at = NULL, retry_times = retry_times + 1 WHERE lock_id = 'old-host-7~abcdef01.1'",
      );
      // And this version claims both rows, NULL or not.
      const lockId = new ClaimTokens().next();
      const rows = await claimRandomHead(fromKnex(db.sluice.knex), tables, {
        queue: 'default',
        priorities: [0],
        want: 2,
        lockId,
        headSize: 10,
      });
      expect(rows.map((r) => r.name).sort()).toEqual(['free', 'held']);
      // Without a NOT NULL, a new row still gets the no-claim time.
      await db.query("INSERT INTO sluice_jobs (queue, name, payload, run_at) VALUES ('default', 'new', '{}', NOW(3))");
      expect((await read()).find((r) => r.name === 'new')?.locked_at).toBe(`${NO_CLAIM}000`);
    } finally {
      await db.query('DELETE FROM sluice_jobs');
      await fixedWidthClaim.up(db.sluice.knex, tables).catch(() => undefined);
      await narrowLockId.up(db.sluice.knex, tables);
    }
  });

  it('refuses to upgrade, changing nothing, while a claim holds a lock_id that does not fit', async () => {
    const tables = db.sluice.tables;
    await fixedWidthClaim.down(db.sluice.knex, tables);
    const long = `${'a-very-long-host-name.example.internal'.repeat(2)}-123~abcdef01.1`;
    try {
      await db.query("INSERT INTO sluice_jobs (queue, name, payload, run_at) VALUES ('default', 'free', '{}', NOW(3))");
      await db.query(
        "INSERT INTO sluice_jobs (queue, name, payload, run_at, lock_id, locked_at) VALUES ('default', 'held', '{}', NOW(3), ?, NOW(3))",
        [long],
      );
      await expect(fixedWidthClaim.up(db.sluice.knex, tables)).rejects.toThrow(
        /1 job\(s\) in `sluice_jobs` are claimed with a lock_id longer than 64 ASCII characters.*Nothing was changed/,
      );
      await expect(fixedWidthClaim.up(db.sluice.knex, tables)).rejects.toBeInstanceOf(SchemaVersionError);
      const [column] = await db.query<{ type: string }>(
        "SELECT COLUMN_TYPE AS type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'sluice_jobs' AND column_name = 'lock_id'",
      );
      expect(column?.type).toBe('varchar(128)');
      expect(await db.query("SELECT lock_id FROM sluice_jobs WHERE name = 'free'")).toEqual([{ lock_id: '' }]);
      expect(await db.query("SELECT lock_id FROM sluice_jobs WHERE name = 'held'")).toEqual([{ lock_id: long }]);
    } finally {
      await db.query('DELETE FROM sluice_jobs');
      await fixedWidthClaim.up(db.sluice.knex, tables);
      await narrowLockId.up(db.sluice.knex, tables);
    }
  });
});

describe('narrowing lock_id from CHAR(64) to CHAR(24) (202611250101)', () => {
  it('keeps the claims that fit; refuses, changing nothing, while a claim of an earlier worker does not fit', async () => {
    const tables = db.sluice.tables;
    const columnType = async () =>
      (
        await db.query<{ type: string }>(
          "SELECT COLUMN_TYPE AS type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'sluice_jobs' AND column_name = 'lock_id'",
        )
      )[0]?.type;
    const held = (lockId: string) =>
      db.query(
        "INSERT INTO sluice_jobs (queue, name, payload, run_at, lock_id, locked_at) VALUES ('default', 'held', '{}', NOW(3), ?, NOW(3))",
        [lockId],
      );
    await narrowLockId.down(db.sluice.knex, tables);
    try {
      expect(await columnType()).toBe('char(64)');
      const current = new ClaimTokens().next();
      await held(current);
      const earlier = 'worker-host.example.internal-123~abcdef01.1';
      await held(earlier);
      await expect(narrowLockId.up(db.sluice.knex, tables)).rejects.toThrow(
        /1 job\(s\) in `sluice_jobs` are claimed with a lock_id longer than 24 characters.*stop those workers.*Nothing was changed/,
      );
      expect(await columnType()).toBe('char(64)');
      expect(
        (await db.query<{ lock_id: string }>('SELECT lock_id FROM sluice_jobs ORDER BY id')).map((r) => r.lock_id),
      ).toEqual([current, earlier]);
      // Once that worker stopped (its claim released), the migration runs and keeps the claim that fits.
      await db.query("UPDATE sluice_jobs SET lock_id = '' WHERE lock_id = ?", [earlier]);
      await narrowLockId.up(db.sluice.knex, tables);
      expect(await columnType()).toBe('char(24)');
      expect(
        (await db.query<{ lock_id: string }>('SELECT lock_id FROM sluice_jobs ORDER BY id')).map((r) => r.lock_id),
      ).toEqual([current, '']);
    } finally {
      await db.query('DELETE FROM sluice_jobs');
      await narrowLockId.up(db.sluice.knex, tables);
    }
  });
});
