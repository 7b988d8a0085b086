import { Migration } from '@mikro-orm/migrations';

// API tokens may expire (api_token.expires_at, null: never) and be revoked (api_token.revoked_at:
// the row stays, so a revoked TASKBAY_ADMIN_TOKEN is not made anew at the next start), and people
// may be disabled (app_user.disabled_at, null: enabled). All three are read where a credential
// becomes a viewer (auth/service.ts viewerForToken, auth/session.ts viewerForSession). Disabling
// or enabling a person updates app_user, which notifies taskbay_auth (Migration20261202000310_auth_changes),
// so every instance drops its cached viewers of that person before its next request; revoking a
// token updates api_token, which notifies the same way.
export class Migration20261204002100_token_person_lifecycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table api_token add column expires_at timestamptz;
alter table api_token add column revoked_at timestamptz;
alter table app_user add column disabled_at timestamptz;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
alter table app_user drop column disabled_at;
alter table api_token drop column revoked_at;
alter table api_token drop column expires_at;
`);
  }
}
