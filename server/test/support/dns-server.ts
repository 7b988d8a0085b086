import { createSocket, type RemoteInfo } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';

// A DNS server on loopback (UDP, RFC 1035 wire format) answering A and AAAA queries from a map
// the test changes as it goes: Taskbay, pointed at it by TASKBAY_AGENT_DNS_SERVERS, resolves
// agent names with real DNS answers, so nothing stands in for its resolver. Every answer has
// TTL 0: no resolver may cache it, and a changed record is the next query's answer (rebinding).

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, the value of TASKBAY_AGENT_DNS_SERVERS. */
  address: string;
  /** Name (lower case, no trailing dot) -> the addresses it resolves to (IPv4 as A, IPv6 as AAAA). Unknown names get NXDOMAIN. */
  records: Map<string, string[]>;
  /** The questions asked, in order: `A meta.agents.example.com`. */
  queries: string[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = offset;
  for (;;) {
    const len = msg[i];
    if (len === undefined) throw new Error('truncated name');
    if (len === 0) return { name: labels.join('.').toLowerCase(), end: i + 1 };
    if (len >= 0xc0) throw new Error('compressed names are not expected in a question');
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'));
    i += 1 + len;
  }
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return Buffer.from(all.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
}

function answer(query: Buffer, records: Map<string, string[]>, queries: string[]): Buffer | null {
  if (query.length < 12) return null;
  const id = query.readUInt16BE(0);
  const flags = query.readUInt16BE(2);
  if (flags & 0x8000 || query.readUInt16BE(4) !== 1) return null;
  const { name, end } = readName(query, 12);
  const type = query.readUInt16BE(end);
  const question = query.subarray(12, end + 4);
  queries.push(`${type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : `TYPE${type}`} ${name}`);
  const known = records.get(name);
  const matching = (known ?? []).filter((a) => (type === TYPE_A ? isIPv4(a) : type === TYPE_AAAA ? isIPv6(a) : false));
  const rcode = known ? 0 : 3; // NOERROR (no data when nothing matches the type) or NXDOMAIN
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  // QR, the query's opcode and RD, RA, rcode.
  header.writeUInt16BE(0x8000 | (flags & 0x7900) | 0x0080 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(matching.length, 6);
  const answers = matching.map((a) => {
    const data = type === TYPE_A ? Buffer.from(a.split('.').map(Number)) : ipv6Bytes(a);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the question's name
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(0, 6); // TTL 0
    rr.writeUInt16BE(data.length, 10);
    return Buffer.concat([rr, data]);
  });
  return Buffer.concat([header, question, ...answers]);
}

export async function startDnsServer(initial: Record<string, string[]> = {}): Promise<TestDnsServer> {
  const records = new Map(Object.entries(initial));
  const queries: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (msg: Buffer, from: RemoteInfo) => {
    let reply: Buffer | null = null;
    try {
      reply = answer(msg, records, queries);
    } catch {
      reply = null; // not a query this server understands: no answer
    }
    if (reply) socket.send(reply, from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  return {
    address: `127.0.0.1:${socket.address().port}`,
    records,
    queries,
    close: () => new Promise<void>((r) => socket.close(() => r())),
  };
}
