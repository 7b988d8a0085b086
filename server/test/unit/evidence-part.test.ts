import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MEDIA_TYPE } from '../../src/a2a/extensions.js';
import { readEvidencePart } from '../../src/evidence/part.js';
import { EVIDENCE_DETAIL_MAX_CHARS } from '../../src/verify-approval/index.js';

// An execution report's detail is bounded in characters (code points), as the database's
// char_length check bounds it; the part's 8 KiB bound is separate and counts bytes.

const emoji = '\u{1F680}'; // one code point, two UTF-16 units, four UTF-8 bytes
const report = (detail: string) => [
  {
    mediaType: MEDIA_TYPE.executionEvidence,
    data: { requestId: randomUUID(), decisionId: randomUUID(), executedDigest: 'a'.repeat(64), outcome: 'succeeded', detail },
  },
];

describe('readEvidencePart: detail', () => {
  it('counts code points: 1500 emoji (3000 UTF-16 units) are within 2000 characters and 8 KiB', () => {
    const detail = emoji.repeat(1500);
    expect(detail.length).toBeGreaterThan(EVIDENCE_DETAIL_MAX_CHARS);
    expect(readEvidencePart(report(detail))).toMatchObject({ ok: true, report: { detail } });
  });

  it(`refuses ${EVIDENCE_DETAIL_MAX_CHARS + 1} characters`, () => {
    expect(readEvidencePart(report('x'.repeat(EVIDENCE_DETAIL_MAX_CHARS + 1)))).toMatchObject({
      ok: false,
      reason: `detail is longer than ${EVIDENCE_DETAIL_MAX_CHARS} characters`,
    });
    expect(readEvidencePart(report('x'.repeat(EVIDENCE_DETAIL_MAX_CHARS)))).toMatchObject({ ok: true });
  });
});
