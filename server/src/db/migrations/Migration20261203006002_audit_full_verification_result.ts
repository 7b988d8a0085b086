import { Migration } from '@mikro-orm/migrations';

// The outcome of each tenant's last finished full verification of its audit log (scheduled by
// the worker every TASKBAY_AUDIT_FULL_VERIFY_INTERVAL seconds, or asked for by an admin), kept
// apart from the run in progress (full_*), so /metrics shows it while the next run goes.
export class Migration20261203006002_audit_full_verification_result extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table audit_verification
  add column last_full_finished_at timestamptz,
  add column last_full_ok boolean,
  add column last_full_problem text;
`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table audit_verification drop column last_full_finished_at, drop column last_full_ok, drop column last_full_problem;');
  }
}
