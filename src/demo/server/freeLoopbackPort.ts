import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: the OS picks it (listen on port 0), we read
 * it and close. Another process may take it before the caller binds it, so a caller that fails
 * with "address in use" asks again.
 */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  server.unref();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('freeLoopbackPort: no TCP address');
  return address.port;
}
