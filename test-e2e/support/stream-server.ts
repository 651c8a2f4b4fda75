// A streaming server for tests, speaking what a CRI streaming server (and so
// the kubelet behind the apiserver) speaks over SPDY/3.1: remote command
// (protocol v4.channel.k8s.io) for /exec/{ns}/{pod}/{container}?command=...,
// running the command as a process on this machine, and port forwarding
// (portforward.k8s.io) for /portForward/... to ports on 127.0.0.1. It stands
// in for a container runtime until tests have real containers.
import { spawn } from 'node:child_process';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingMessage } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { SpdyConnection, type SpdyStream } from '../../shared/streaming/spdy';
import { createCA, createServingCert } from '../../shared/pki/certs';

export interface StreamServer {
  port: number;
  /** Open sessions (for leak checks). */
  sessions(): number;
  /** Requests seen, with their paths and queries. */
  requests: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

const SUCCESS = { metadata: {}, status: 'Success' };

function exitStatus(code: number) {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: exit status ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

export async function startStreamServer(): Promise<StreamServer> {
  const ca = await createCA('stream-server-ca', 1);
  const cert = await createServingCert(ca, '127.0.0.1', { ips: ['127.0.0.1'], dnsNames: ['localhost'] });
  const sockets = new Set<Duplex>();
  const requests: StreamServer['requests'] = [];
  const server: Server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end('Upgrade request required');
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const url = new URL(req.url ?? '/', 'https://x');
    const kind = url.pathname.split('/')[1];
    const offered = ([] as string[])
      .concat(req.headers['x-stream-protocol-version'] ?? [])
      .flatMap((v) => v.split(','));
    const want = kind === 'portForward' ? 'portforward.k8s.io' : 'v4.channel.k8s.io';
    if (
      String(req.headers.upgrade).toLowerCase() !== 'spdy/3.1' ||
      !offered.map((v) => v.trim()).includes(want)
    ) {
      socket.end(
        'HTTP/1.1 400 Bad Request\r\nContent-Length: 25\r\nConnection: close\r\n\r\nunsupported stream request',
      );
      return;
    }
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${want}\r\n\r\n`,
    );
    const conn = new SpdyConnection(socket, 'server', head);
    if (kind === 'portForward') portForward(conn);
    else remoteCommand(conn, url.searchParams);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    sessions: () => sockets.size,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function remoteCommand(conn: SpdyConnection, q: URLSearchParams): void {
  const tty = q.get('tty') === '1';
  const expected = new Set(['error']);
  if (q.get('input') === '1') expected.add('stdin');
  if (q.get('output') === '1') expected.add('stdout');
  if (q.get('error') === '1' && !tty) expected.add('stderr');
  if (tty) expected.add('resize');
  const streams = new Map<string, SpdyStream>();
  conn.on('stream', (s: SpdyStream) => {
    streams.set(s.header('streamtype') ?? '', s);
    if ([...expected].every((t) => streams.has(t))) run();
  });
  const run = () => {
    const cmd = q.getAll('command');
    const child = tty
      ? spawn('script', ['-qfec', cmd.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' '), '/dev/null'], {
          stdio: 'pipe',
        })
      : spawn(cmd[0], cmd.slice(1), { stdio: 'pipe' });
    const stdin = streams.get('stdin');
    if (stdin) stdin.pipe(child.stdin);
    else child.stdin.end();
    child.stdin.on('error', () => {});
    const out = streams.get('stdout');
    const err = streams.get('stderr');
    // Settles once every byte of output so far went out (a stream's writes complete in order).
    let written = Promise.resolve();
    const copy = (to: SpdyStream | undefined) => (d: Buffer) => {
      if (to) written = new Promise((r) => to.write(d, () => r()));
    };
    child.stdout.on('data', copy(out));
    child.stderr.on('data', copy(err ?? out));
    // The client goes away: the process goes too.
    conn.on('close', () => child.kill('SIGKILL'));
    child.on('error', (e) => finish(127, e.message));
    child.on('close', (code) => finish(code ?? 1));
    let done = false;
    // As Kubernetes' remote-command server ends a session: the status on the error stream,
    // then a reset of every stream (output streams get no FIN) and the connection's close.
    const finish = (code: number, message?: string) => {
      if (done) return;
      done = true;
      const status = message
        ? { metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 }
        : code === 0
          ? SUCCESS
          : exitStatus(code);
      const e = streams.get('error')!;
      void written.then(() =>
        e.end(JSON.stringify(status), () => {
          for (const st of streams.values()) st.reset();
          conn.close();
        }),
      );
    };
  };
}

function portForward(conn: SpdyConnection): void {
  conn.on('stream', (s: SpdyStream) => {
    if (s.header('streamtype') !== 'data') return;
    const port = Number(s.header('port'));
    const c = net.connect({ host: '127.0.0.1', port });
    c.on('error', () => s.reset());
    s.pipe(c);
    c.pipe(s);
  });
}
