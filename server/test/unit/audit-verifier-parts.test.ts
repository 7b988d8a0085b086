import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventHash, type AuditEventRow } from '../../src/audit/log.js';
import { auditSigner } from '../../src/audit/signing.js';
import { AuditVerifier, checkpointHash, verifyAudit, type CheckpointRecord } from '../../src/audit/verify.js';

// The worker verifies a tenant's log in parts (audit/verification.ts): the checkpoints and events
// since the last part, the verifier's state stored as JSON in between, the streams continued from
// their last verified event and the heads a new checkpoint records looked up among the events
// verified before. Whatever the log and wherever it is cut, that gives the report the offline
// verifier (all at once) gives, tampered logs included.

const signer = auditSigner(generateKeyPairSync('ed25519').privateKey);
const stranger = auditSigner(generateKeyPairSync('ed25519').privateKey);
const tenantId = randomUUID();

let seed = 20261202;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const below = (n: number) => Math.floor(rand() * n);

/** A log as Taskbay writes it: legacy unsigned events and checkpoints first, then signed ones, in time order. */
function log() {
  const events: AuditEventRow[] = [];
  const checkpoints: CheckpointRecord[] = [];
  const timeline: { event?: number; checkpoint?: number }[] = [];
  const streams = Array.from({ length: 1 + below(5) }, (_, i) => `approval:${i}`);
  const heads = new Map<string, AuditEventRow>();
  const recorded = new Map<string, string>();
  let prevOwn: string | null = null;
  let prevLegacy: string | null = null;
  let firstSigned: number | null = null;
  const legacyEvents = below(4);
  let seq = 0;
  for (let i = 0, n = 3 + below(30); i < n; i++) {
    if (rand() < 0.2 && events.length) {
      const at = new Date(1.7e12 + i);
      const cp = { seq: checkpoints.length + 1, at, sig: null, keyId: null } as unknown as CheckpointRecord;
      if (firstSigned === null && rand() < 0.5) {
        Object.assign(cp, {
          tenantId: null,
          prevHash: prevLegacy,
          firstSignedEventSeq: null,
          heads: Object.fromEntries([...heads].map(([s, e]) => [`${tenantId}/${s}`, e.hash])),
        });
        cp.hash = checkpointHash(cp);
        prevLegacy = cp.hash;
      } else {
        const changed = [...heads].filter(([s, e]) => recorded.get(s) !== e.hash);
        if (!changed.length) continue;
        for (const [s, e] of changed) recorded.set(s, e.hash);
        Object.assign(cp, {
          tenantId,
          prevHash: prevOwn,
          firstSignedEventSeq: firstSigned,
          heads: Object.fromEntries(changed.map(([s, e]) => [s, { seq: e.seq, hash: e.hash }])),
        });
        cp.hash = checkpointHash(cp);
        cp.sig = signer.sign('checkpoint', cp.hash);
        cp.keyId = signer.keyId;
        prevOwn = cp.hash;
      }
      checkpoints.push(cp);
      timeline.push({ checkpoint: cp.seq });
      continue;
    }
    const stream = streams[below(streams.length)]!;
    seq += 1 + below(2); // gaps, as rolled-back transactions leave
    const base = {
      id: randomUUID(),
      tenantId,
      stream,
      type: 't',
      actorType: 'system' as const,
      actorId: null,
      at: new Date(1.7e12 + i),
      data: { i },
      prevHash: heads.get(stream)?.hash ?? null,
    };
    const hash = eventHash(base);
    const signed = i >= legacyEvents;
    const e: AuditEventRow = { ...base, seq, hash, sig: signed ? signer.sign('event', hash) : null, keyId: signed ? signer.keyId : null };
    if (signed && firstSigned === null) firstSigned = seq;
    events.push(e);
    heads.set(stream, e);
    timeline.push({ event: seq });
  }
  return { events, checkpoints, timeline };
}

/**
 * What the attacker of the integration tests does, at random. A signature is stripped only after
 * the cut: stripped before the first part was verified, it would have been missing when the
 * later checkpoints were written too, and they would record a later first signed event.
 */
function tamper(events: AuditEventRow[], checkpoints: CheckpointRecord[], cut: number) {
  if (!events.length) return;
  const i = below(events.length);
  const e = events[i]!;
  switch (below(9)) {
    case 0:
      events[i] = { ...e, data: { forged: true } };
      break;
    case 1:
      events.splice(i, 1);
      break;
    case 2:
      if (e.seq > cut) events[i] = { ...e, sig: null, keyId: null };
      break;
    case 3:
      events[i] = { ...e, prevHash: 'ab'.repeat(32) };
      break;
    case 4:
      events[i] = { ...e, data: { rehashed: true }, hash: eventHash({ ...e, data: { rehashed: true } }) };
      break;
    case 5:
      events[i] = { ...e, sig: stranger.sign('event', e.hash), keyId: stranger.keyId };
      break;
    case 6:
      if (checkpoints.length) checkpoints.splice(below(checkpoints.length), 1);
      break;
    case 7:
      for (let j = events.length - 1; j >= 0; j--) if (events[j]!.stream === e.stream) events.splice(j, 1);
      break;
    case 8:
      events[i] = { ...e, tenantId: randomUUID() };
      break;
  }
}

describe('verifying in parts', () => {
  it('gives the report of verifying at once, for 600 logs (most of them tampered) cut at random', () => {
    let broken = 0;
    for (let n = 0; n < 600; n++) {
      const { events, checkpoints, timeline } = log();
      // A part ends where the worker's horizon would: a moment of the log's history.
      const cut = timeline.slice(0, below(timeline.length + 1));
      const upTo = Math.max(0, ...cut.map((x) => x.event ?? 0));
      const upToCheckpoint = Math.max(0, ...cut.map((x) => x.checkpoint ?? 0));
      for (let k = below(3); k > 0; k--) tamper(events, checkpoints, upTo);
      // Just after the cut, where what the first part established must carry over.
      const next = events.findIndex((e) => e.seq > upTo);
      if (next >= 0 && rand() < 0.3) events[next] = { ...events[next]!, sig: null, keyId: null };
      const whole = verifyAudit({ tenantId, events: [...events].reverse(), checkpoints, trusted: [signer] });
      if (!whole.ok) broken++;

      const first = new AuditVerifier({ tenantId, trusted: [signer] });
      first.addCheckpoints(checkpoints.filter((c) => c.seq <= upToCheckpoint));
      first.addEvents(events.filter((e) => e.seq <= upTo));
      first.finish();

      const second = new AuditVerifier({ tenantId, trusted: [signer], resume: JSON.parse(JSON.stringify(first.state())) });
      const before = events.filter((e) => e.seq <= upTo).sort((a, b) => a.seq - b.seq);
      const after = events.filter((e) => e.seq > upTo);
      const lastOf = new Map(before.map((e) => [e.stream, e.hash]));
      second.continueStreams(second.unknownStreams(after).flatMap((s) => (lastOf.has(s) ? [[s, lastOf.get(s)!] as [string, string]] : [])));
      second.addCheckpoints(checkpoints.filter((c) => c.seq > upToCheckpoint));
      // Two calls: the events of a part come a page at a time.
      const half = Math.floor(after.length / 2);
      second.addEvents(after.slice(0, half));
      second.addEvents(after.slice(half));
      second.headsFound(second.missingHeads().filter((h) => before.some((e) => e.stream === h.stream && e.hash === h.hash)));
      expect(second.finish()).toEqual(whole);
    }
    expect(broken).toBeGreaterThan(200);
  });

  it('refuses events out of seq order, which would skip the link checks', () => {
    let events = log().events;
    while (events.length < 2) events = log().events;
    const v = new AuditVerifier({ tenantId, trusted: [signer] });
    v.addEvents(events.slice(-1));
    expect(() => v.addEvents(events.slice(0, 1))).toThrow(/seq order/);
  });
});
