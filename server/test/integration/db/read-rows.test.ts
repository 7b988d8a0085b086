import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalRequest, type ApprovalRow } from '../../../src/approvals/entities.js';
import { readRows } from '../../../src/db/read-rows.js';
import { ORDER_NEWEST } from '../../../src/graphql/pagination.js';
import { DEFAULT_POLICY } from '../../../src/policies/snapshot.js';
import { startTestInstance, type TestInstance } from '../../support/harness.js';

// db/read-rows.ts writes list filters straight into SQL and maps the rows as MikroORM does: the
// rows must be what `em.find` gives (same rows, same order, same values), for every filter shape
// the lists use, and a filter outside its language goes through the query builder.

let t: TestInstance;
let tenant: string;
let people: string[];

beforeAll(async () => {
  t = await startTestInstance({ worker: false });
  people = (await t.sql(`select id, tenant_id from app_user order by email`)).map((r) => r.id);
  [{ tenant_id: tenant }] = await t.sql(`select tenant_id from app_user limit 1`);
  // Same created_at on pairs of rows (the id breaks the tie), in milliseconds as the server writes them.
  await t.sql(
    `insert into approval (id, tenant_id, source, status, title, summary, risk, revision, digest, action, policy, created_at, requester_id, expires_at)
     select gen_random_uuid(), $1, 'USER', (array['PENDING','APPROVED','REJECTED','EXPIRED'])[1 + (i % 4)], 'row ' || i,
            case when i % 3 = 0 then 'it''s "quoted" ?' end, 'HIGH', 1, md5(i::text) || md5(i::text),
            jsonb_build_object('kind', 'send_message', 'text', 'x' || i), $2::jsonb,
            date_trunc('milliseconds', now()) - make_interval(secs => i / 2), case when i % 2 = 0 then $3::uuid end,
            case when i % 5 = 0 then now() + interval '1 day' end
       from generate_series(1, 40) as i`,
    [tenant, JSON.stringify(DEFAULT_POLICY), people[0]],
  );
});
afterAll(async () => {
  await t?.stop();
});

describe('readRows', () => {
  it('gives the rows, order and values em.find gives, for each filter shape of the lists', async () => {
    const em = t.instance.orm.em.fork();
    const [pivot] = await em.find(ApprovalRequest, { tenantId: tenant }, { orderBy: ORDER_NEWEST, limit: 1, offset: 9 });
    const filters: Record<string, unknown>[] = [
      { tenantId: tenant },
      { $and: [{ tenantId: tenant, $or: [{ requesterId: people[0] }, { agentId: null }] }, {}], status: { $in: ['PENDING', 'EXPIRED'] } },
      { tenantId: tenant, $or: [{ createdAt: { $lt: pivot!.createdAt } }, { createdAt: pivot!.createdAt, id: { $lt: pivot!.id } }] },
      { tenantId: tenant, id: null },
      { tenantId: tenant, status: { $in: [] } },
      { tenantId: tenant, $or: [] },
      { tenantId: tenant, requesterId: { $ne: people[0] }, revision: { $gte: 1 } },
      // Outside the language: through the query builder.
      { tenantId: tenant, title: { $like: 'row 1%' } },
    ];
    for (const where of filters) {
      const found = await em.fork().find(ApprovalRequest, where as never, { orderBy: ORDER_NEWEST, limit: 25 });
      const rows = await readRows<ApprovalRow>(em.fork(), ApprovalRequest, where as never, { orderBy: ORDER_NEWEST, limit: 25 });
      expect(rows, JSON.stringify(where)).toEqual(found.map((e) => ({ ...e })));
      expect(Object.getPrototypeOf(rows[0] ?? {})).toBe(Object.prototype);
    }
  });
});
