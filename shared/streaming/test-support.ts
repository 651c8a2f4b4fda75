// For the streaming tests: the two ends of a real TCP connection on 127.0.0.1.
import net, { type AddressInfo } from 'node:net';

export interface TcpPair {
  /** The end that connected. */
  client: net.Socket;
  /** The end the listener accepted. */
  server: net.Socket;
  /** Destroys both ends and stops listening. */
  close(): void;
}

export async function tcpPair(): Promise<TcpPair> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const accepted = new Promise<net.Socket>((r) => srv.once('connection', r));
  const client = net.connect((srv.address() as AddressInfo).port, '127.0.0.1');
  const server = await accepted;
  return {
    client,
    server,
    close() {
      client.destroy();
      server.destroy();
      srv.close();
    },
  };
}
