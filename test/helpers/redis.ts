import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach } from 'vitest';
import { parseRedisUrl, RedisLink } from '../../src/coord/redis/link.js';

/**
 * A real Redis (Debian's redis-server) on a free 127.0.0.1 port, without persistence: nothing is
 * written to disk, and a restart starts empty, as after a Redis failure. `.ci/run` installs it.
 */
export interface TestRedis {
  port: number;
  url: string;
  stop(): Promise<void>;
  /** Starts it again on the same port (after `stop`). */
  start(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts redis-server and resolves once it accepts connections; rejects with its output if it exits first. */
function launch(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (d: Buffer) => {
      output += d.toString();
      if (/Ready to accept connections/.test(output)) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        resolve(child);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', (error) => reject(new Error(`cannot start redis-server (is the redis-server package installed?): ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Gives each test a Redis of its own (`await redis()`), stopped after the test. */
export function useRedis(): () => Promise<TestRedis> {
  const running: TestRedis[] = [];
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
  });
  return async () => {
    // A port found free may be taken before redis-server binds it: try a few.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        let child = await launch(port);
        const redis: TestRedis = {
          port,
          url: `redis://127.0.0.1:${port}/0`,
          stop: () => stopChild(child),
          start: async () => {
            child = await launch(port);
          },
        };
        running.push(redis);
        return redis;
      } catch (error) {
        if (attempt >= 5) throw error;
      }
    }
  };
}

/**
 * Connections to a test's Redis (`await connect(url)`: each its own, as two machines have), closed
 * after the test. Call it after useRedis: hooks run in reverse, so the links close before Redis stops.
 */
export function useRedisLinks(): (url: string) => Promise<RedisLink> {
  const links: RedisLink[] = [];
  afterEach(async () => {
    for (const link of links.splice(0)) await link.close();
  });
  return async (url) => {
    const link = await RedisLink.connect(parseRedisUrl(url));
    links.push(link);
    return link;
  };
}
