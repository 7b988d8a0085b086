import type { EntityManager } from '@mikro-orm/postgresql';
import { addJob } from '../db/sql.js';
import type { JobDefinition } from '../jobs/job.js';
import { writeCheckpoint, type WrittenCheckpoint } from './chain.js';
import { runVerification } from './verification.js';
import { markFullVerificationFailed, markFullVerificationRequested } from './verification-store.js';

// The worker's side of audit verification (audit/verification.ts). After each checkpoint, the
// tenants it recorded are verified up to it, continuing from their stored state; an admin can
// ask for a full verification (verifyAuditChain). One named queue per tenant runs a tenant's
// verifications one at a time, across instances; job keys keep one of each kind queued.

export const AUDIT_VERIFY_JOB = 'audit_verify';

const queueName = (tenantId: string) => `audit-verify:${tenantId}`;

function queue(em: EntityManager, tenantId: string, full: boolean) {
  return addJob(em, AUDIT_VERIFY_JOB, full ? { tenantId, full } : { tenantId }, {
    jobKey: `${full ? 'audit-verify-full' : 'audit-verify'}:${tenantId}`,
    queueName: queueName(tenantId),
    maxAttempts: 3,
  });
}

/** The checkpoint job: a checkpoint, then the verification of every tenant it recorded. */
export async function checkpointThenVerify(em: EntityManager): Promise<WrittenCheckpoint[]> {
  const written = await writeCheckpoint(em);
  for (const tenantId of new Set(written.map((w) => w.tenantId))) await queue(em, tenantId, false);
  return written;
}

/** verifyAuditChain: queues a full verification unless one is queued or running. */
export async function requestFullVerification(em: EntityManager, tenantId: string): Promise<void> {
  await em.transactional(async (tem) => {
    if (await markFullVerificationRequested(tem, tenantId)) await queue(tem, tenantId, true);
  });
}

export const auditVerifyJob: JobDefinition = {
  name: AUDIT_VERIFY_JOB,
  async run(payload, _helpers, { orm }) {
    const { tenantId, full } = (payload ?? {}) as { tenantId?: unknown; full?: unknown };
    if (typeof tenantId !== 'string') return;
    const em = orm.em.fork();
    try {
      await runVerification(em, tenantId, { full: full === true });
    } catch (e) {
      if (full === true) await markFullVerificationFailed(em, tenantId, (e as Error).message ?? String(e));
      throw e;
    }
  },
};
