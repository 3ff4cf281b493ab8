import { describe, expect, it } from 'vitest';
import { serverOrThrowaway } from '../../../src/demo/server/serverOrThrowaway.ts';
import { ConnectionError } from '../../../src/errors.ts';
import { useTestDatabase } from '../../helpers/testDatabase.ts';

const db = useTestDatabase('server_or_throwaway');

/** The fallback of `sluice demo` and the test suite (the throwaway itself: test/cli/demo.test.ts). */
describe('serverOrThrowaway', () => {
  it('uses the server at the URL when it answers, and starts nothing', async () => {
    const lines: string[] = [];
    const server = await serverOrThrowaway(db.url, (line) => lines.push(line));
    expect([server.url, server.started, lines]).toEqual([db.url, null, []]);
    await server.stop();
  });

  it('a server that answers but refuses us is an error, never a reason to start another', async () => {
    const url = new URL(db.url);
    url.username = 'sluice_no_such_user';
    url.password = 'secret-password';
    const lines: string[] = [];
    const error = await serverOrThrowaway(url.toString(), (line) => lines.push(line)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(
      /cannot use the server at mysql:\/\/sluice_no_such_user:\*\*\*@.*Access denied/,
    );
    expect((error as Error).message).not.toContain('secret-password');
    expect(lines).toEqual([]);
  });
});
