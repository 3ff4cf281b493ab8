import type { Executor } from './executor.ts';

export interface ServerInfo {
  readonly flavor: 'mysql' | 'mariadb';
  readonly version: string;
  readonly maxAllowedPacket: number;
}

/** Params: none. Returns one row: version string and max_allowed_packet in bytes. */
const SQL_SERVER_INFO = `
SELECT VERSION() AS version,
       @@max_allowed_packet AS max_allowed_packet`;

/** Reads the server flavour and packet limit once; enqueue plans its chunks from the latter. */
export async function readServerInfo(db: Executor): Promise<ServerInfo> {
  const [row] = await db.select<{ version: string; max_allowed_packet: number | string }>(SQL_SERVER_INFO);
  const version = row?.version ?? '';
  return {
    flavor: /mariadb/i.test(version) ? 'mariadb' : 'mysql',
    version,
    maxAllowedPacket: Number(row?.max_allowed_packet ?? 4 * 1024 * 1024),
  };
}
