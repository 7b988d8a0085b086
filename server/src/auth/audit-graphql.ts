import { AuditEventRef, type AuditEventRow } from '../audit/module.js';
import { builder } from '../graphql/builder.js';
import type { Context } from '../graphql/context.js';
import { rowOf } from '../graphql/loaders.js';
import { isUuid } from '../lib/untrusted.js';
import type { UserRow } from './entities.js';
import { UserRef } from './graphql.js';

// The person behind an audit event, as a field of AuditEvent: auth knows people, the log does not.

/**
 * The person an event names as its actor, as far as the viewer may see them (a person of the
 * viewer's tenant, as node(id) answers). The log is read as it is stored: a row written behind
 * Taskbay's back may name anyone, or a text that is no uuid (which would fail the loader's whole
 * batch, every other event's actor with it).
 */
function actorOf(e: AuditEventRow, ctx: Context): UserRow | null | Promise<UserRow | null> {
  if (e.actorType !== 'user' || !e.actorId || !isUuid(e.actorId)) return null;
  const visible = (u: UserRow | null) => (u && ctx.viewer && u.tenantId === ctx.viewer.tenantId ? u : null);
  const row = rowOf(ctx.loaders.user, e.actorId);
  return row instanceof Promise ? row.then(visible) : visible(row);
}

builder.objectFields(AuditEventRef, (t) => ({
  actor: t.field({
    type: UserRef,
    nullable: true,
    description:
      "The person who acted, when actorType is user and the viewer may see them (a person of the viewer's tenant); null for an agent, a service, the system, or anyone else.",
    resolve: (e, _x, ctx) => actorOf(e, ctx),
  }),
}));
