import { Migration } from '@mikro-orm/migrations';

// Signed outgoing webhooks (webhooks/, docs/WEBHOOKS.md). An endpoint belongs to a tenant and
// names the event types it wants; its signing secrets are kept apart (several are live while an
// old one is in its grace period after a rotation). A delivery is one message to one endpoint,
// written in the transaction of the audit event that causes it (at most one per endpoint and
// event), with its exact body, so every attempt sends the same bytes under the same webhook-id;
// each attempt is logged. Removing an endpoint removes its secrets and its log.
export class Migration20261202000500_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table webhook_endpoint (
  id uuid primary key,
  tenant_id uuid not null references tenant(id) deferrable initially deferred,
  url text not null,
  description text,
  event_types text[] not null,
  enabled boolean not null default true,
  created_by_id uuid references app_user(id) deferrable initially deferred,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_endpoint_tenant on webhook_endpoint (tenant_id);

create table webhook_secret (
  id uuid primary key,
  endpoint_id uuid not null references webhook_endpoint(id) on delete cascade deferrable initially deferred,
  secret text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz
);
create index webhook_secret_endpoint on webhook_secret (endpoint_id);

create table webhook_delivery (
  id uuid primary key,
  endpoint_id uuid not null references webhook_endpoint(id) on delete cascade deferrable initially deferred,
  message_id text not null unique,
  event_type text not null,
  audit_event_id uuid,
  payload text not null,
  status text not null check (status in ('PENDING', 'DELIVERED', 'FAILED')),
  attempts int not null default 0,
  next_attempt_at timestamptz,
  last_status_code int,
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  delivered_at timestamptz,
  unique (endpoint_id, audit_event_id)
);
create index webhook_delivery_log on webhook_delivery (endpoint_id, created_at desc, id desc);

create table webhook_attempt (
  id uuid primary key,
  delivery_id uuid not null references webhook_delivery(id) on delete cascade deferrable initially deferred,
  number int not null,
  at timestamptz not null,
  status_code int,
  error text,
  duration_ms int not null,
  next_retry_at timestamptz,
  unique (delivery_id, number)
);
`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table webhook_attempt; drop table webhook_delivery; drop table webhook_secret; drop table webhook_endpoint;');
  }
}
