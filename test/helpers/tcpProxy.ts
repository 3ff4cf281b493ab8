import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of the test server, for network faults made for real: `cut()` destroys
 * every connection through it and refuses new ones (as a restarting or unreachable server does)
 * until `restore()`. `url` is the given URL with the proxy's port. `holdMs` holds each new
 * connection that long before passing it on (a server slow to answer a handshake).
 */
export interface TcpProxy {
  readonly url: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetUrl: string, { holdMs = 0 } = {}): Promise<TcpProxy> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || 3306);
  const sockets = new Set<Socket>();
  let down = false;
  const pass = (client: Socket) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server: Server = createServer((client) => {
    if (holdMs === 0) return pass(client);
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    setTimeout(() => pass(client), holdMs).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      down = false;
    },
    close() {
      down = true;
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
