import { Migration } from '@mikro-orm/migrations';

// The counters of console sign-in limiting (auth/sign-in-limiter.ts), shared by every instance.
// The shape is the one rate-limiter-flexible's RateLimiterPostgres creates itself (key, points,
// expire in epoch milliseconds); it is created here so the app needs no DDL rights at runtime.
export class Migration20261201000700_sign_in_limit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table sign_in_limit (
  key varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);
create index sign_in_limit_expire_idx on sign_in_limit (expire);
`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table sign_in_limit;');
  }
}
