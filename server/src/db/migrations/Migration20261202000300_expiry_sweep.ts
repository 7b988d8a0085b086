import { Migration } from '@mikro-orm/migrations';

// Expiry without a job per request (approvals/expiry.ts): the sweepers read the nearest deadline
// of a PENDING request and the due ones in deadline order from this index. Jobs queued by the
// per-request expiry before it are left in the queue: expire_approval still runs them.
export class Migration20261202000300_expiry_sweep extends Migration {
  override async up(): Promise<void> {
    // Pending deferred checks of earlier migrations in this transaction would refuse an index on
    // approval (55006): they run now.
    this.addSql(`set constraints all immediate;
create index approval_pending_expiry on approval (expires_at) where status = 'PENDING';`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index approval_pending_expiry;');
  }
}
