import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A hostile MCP server for the gateway's limits: it speaks just enough Streamable HTTP (JSON
// answers, one session) to be connected to, then misbehaves in one way per tool: `huge` answers
// 10 MB, `endless` streams an answer that never ends, and with `manyTools` its tool list has
// 10,000 tools.

export async function hostileMcpUpstream(opts: { manyTools?: boolean } = {}) {
  let endlessWrites = 0;
  const open = new Set<ServerResponse>();
  const server = createServer(async (req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const json = (result: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'hostile' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    if (msg.id === undefined) return void res.writeHead(202).end();
    if (msg.method === 'initialize') {
      return json({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1' } });
    }
    if (msg.method === 'tools/list') {
      const n = opts.manyTools ? 10_000 : 2;
      const names = opts.manyTools ? Array.from({ length: n }, (_, i) => `tool-${i}`) : ['huge', 'endless'];
      return json({ tools: names.map((name) => ({ name, inputSchema: { type: 'object' } })) });
    }
    if (msg.method === 'tools/call' && msg.params.name === 'huge') {
      return json({ content: [{ type: 'text', text: 'x'.repeat(10 * 1024 * 1024) }] });
    }
    if (msg.method === 'tools/call' && msg.params.name === 'endless') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'hostile' });
      const junk = `: ${'y'.repeat(64 * 1024)}\n\n`;
      const pump = () => {
        while (!res.destroyed && res.write(junk)) endlessWrites++;
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    /** How many 64 KiB chunks the endless answer wrote before its reader let go. */
    endlessWrites: () => endlessWrites,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of open) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
