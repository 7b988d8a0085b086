import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { sql } from '../db/sql.js';
import { AuditCheckpoint, AuditEvent } from './entities.js';
import { rowToEvent, type AuditEventRow } from './log.js';
import { auditRoutes } from './routes.js';
import { checkpointJob } from './checkpoints.js';
import { auditVerifyJob } from './verification-job.js';
import { auditFullVerifyScheduleJob } from './full-verification-schedule.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import './verification-graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { type AppendedEventsHook, registerAppendedEventsHook } from './appended.js';
export {
  type AuditEventType,
  type AuditPayload,
  auditTypesOf,
  COMMAND_EVENT_TYPES,
  type CommandEventType,
  webhookTypeOf,
  type WebhookPayloadType,
} from './catalogue.js';
export { verifyStream } from './chain.js';
export { type CommittedEvent, observeCommittedEvents } from './committed.js';
export {
  checkDecisionRecord,
  decisionEventsOf,
  decisionEventsSubquery,
  type DecisionRecordVerdict,
  INTEGRITY_ALERT,
  INTEGRITY_ALERT_KINDS,
  integrityAlert,
  isDecisionEventType,
  isSignedByTaskbay,
  loadDecisionEvents,
  refusalMessage,
  trustedAuditKey,
} from './decision-record.js';
export { AuditChainStatusRef, AuditEventRef, IntegrityAlertRef } from './graphql.js';
export { type Actor, appendEvents, type AuditEventInput, type AuditEventRow, EVENTS_CHANNEL, rowToEvent, stream, streamOpenedHere, SYSTEM } from './log.js';
export { AuditPins, registerAuditPins } from './pin.js';
export { AUDIT_KEY_FILE, loadAuditSigningKey, registerAuditSigner } from './signing.js';
export { FULL_VERIFICATION_SUMMARY } from './verification-store.js';

// The audit log: every event of every module, hash-chained and signed; its checkpoints, verification
// and export. It imports no domain: the others write to it (audit/log.ts).

const loaders = (em: EntityManager) => ({
  /** The events of each stream, in order. */
  events: new DataLoader<string, AuditEventRow[]>(async (streams) => {
    const rows = (await sql(em, 'select * from audit_event where stream in (?) order by seq', [[...streams]])).map(rowToEvent);
    return streams.map((s) => rows.filter((r) => r.stream === s));
  }),
});
type AuditLoaders = ReturnType<typeof loaders>;
declare module '../graphql/loaders.js' {
  interface Loaders extends AuditLoaders {}
}

export const auditModule = defineModule({
  name: 'audit',
  entities: [AuditEvent, AuditCheckpoint],
  loaders,
  routes: auditRoutes,
  jobs: [checkpointJob, auditVerifyJob, auditFullVerifyScheduleJob],
});
