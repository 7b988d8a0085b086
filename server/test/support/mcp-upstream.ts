import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { freePort } from './free-port.js';

// Real MCP servers from the npm registry, run by the tests as an upstream of the gateway:
// @modelcontextprotocol/server-everything over Streamable HTTP on a loopback port.

const require = createRequire(import.meta.url);

export interface RunningUpstream {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything's Streamable HTTP transport, ready when it says it listens. */
export async function startServerEverything(): Promise<RunningUpstream> {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const port = await freePort();
  const child = spawn(process.execPath, [entry, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes(`listening on port ${port}`)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}) before listening: ${output.slice(-500)}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
