import { Migration } from '@mikro-orm/migrations';

// Quorum (policies/snapshot.ts quorum, decisions/quorum.ts): an approval toward a quorum, and a
// rejection a policy records without closing, are decisions marked `vote`; they leave the request
// PENDING. The database keeps its two rules whatever the code does:
// - one final decision per request: decision_one_final now covers the decisions that are neither
//   a DELEGATE nor a vote (the M-th approval, which closes a quorum, is a final decision);
// - one say per reviewer and revision: a reviewer has at most one non-DELEGATE decision on a
//   revision (a vote, a recorded rejection or the final decision), so a duplicate vote is refused
//   and the final approval cannot come from someone who already voted on that revision.
// The approval row's trigger (approval_final) still lets a request leave PENDING once.
export class Migration20261203002000_quorum_votes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table decision add column vote boolean not null default false;
alter table decision add constraint decision_vote_check check (not vote or outcome = any (array['APPROVE', 'EDIT_AND_APPROVE', 'REJECT']));
drop index decision_one_final;
create unique index decision_one_final on decision (approval_id) where outcome <> 'DELEGATE' and not vote;
create unique index decision_one_say_per_revision on decision (approval_id, revision, reviewer_id) where outcome <> 'DELEGATE';
`);
  }
}
