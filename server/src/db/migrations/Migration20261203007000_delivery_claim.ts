import { Migration } from '@mikro-orm/migrations';

// The claim on a delivery (delivery/worker.ts beginAttempt): the deciding instance sends an
// approved delivery itself right after the commit and its job is the fallback, so an attempt
// starts only by taking the claim, a lease (claimed_until) naming the attempt that holds it
// (claim_id); the attempt's outcome clears it, a crashed sender's lapses. attempts_at_queue is
// the attempt count when the delivery was last queued (0; a reviewer's retry sets it), so each
// queueing has TASKBAY_DELIVERY_MAX_ATTEMPTS attempts of its own while `attempts` counts them all.
// A retried delivery in flight during the upgrade counts from 0: its next failure makes it FAILED.
export class Migration20261203007000_delivery_claim extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table delivery
  add column claimed_until timestamptz,
  add column claim_id uuid,
  add column attempts_at_queue int not null default 0;
`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table delivery drop column claimed_until, drop column claim_id, drop column attempts_at_queue;');
  }
}
