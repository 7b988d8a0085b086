import { Migration20261129000000_initial } from './Migration20261129000000_initial.js';
import { Migration20261130000000_command_approvals } from './Migration20261130000000_command_approvals.js';
import { Migration20261130000100_a2a_completeness } from './Migration20261130000100_a2a_completeness.js';
import { Migration20261130000200_card_snapshots_immutable } from './Migration20261130000200_card_snapshots_immutable.js';
import { Migration20261201000400_audit_signatures } from './Migration20261201000400_audit_signatures.js';
import { Migration20261201000500_agent_last_error } from './Migration20261201000500_agent_last_error.js';
import { Migration20261201000600_approver_scope } from './Migration20261201000600_approver_scope.js';
import { Migration20261201000700_sign_in_limit } from './Migration20261201000700_sign_in_limit.js';
import { Migration20261201000800_audit_event_xid } from './Migration20261201000800_audit_event_xid.js';
import { Migration20261201000900_task_replies } from './Migration20261201000900_task_replies.js';
import { Migration20261202000100_audit_verification } from './Migration20261202000100_audit_verification.js';
import { Migration20261202000110_inbox_indexes } from './Migration20261202000110_inbox_indexes.js';
import { Migration20261202000300_expiry_sweep } from './Migration20261202000300_expiry_sweep.js';
import { Migration20261202000310_auth_changes } from './Migration20261202000310_auth_changes.js';
import { Migration20261202000400_delivery_signature } from './Migration20261202000400_delivery_signature.js';
import { Migration20261202000500_webhooks } from './Migration20261202000500_webhooks.js';
import { Migration20261203000000_policy_contract } from './Migration20261203000000_policy_contract.js';
import { Migration20261203000200_grant_row_final } from './Migration20261203000200_grant_row_final.js';
import { Migration20261203001000_policies } from './Migration20261203001000_policies.js';
import { Migration20261203002000_quorum_votes } from './Migration20261203002000_quorum_votes.js';
import { Migration20261203003000_escalation } from './Migration20261203003000_escalation.js';
import { Migration20261203004000_execution_evidence } from './Migration20261203004000_execution_evidence.js';
import { Migration20261203005000_agui_agents } from './Migration20261203005000_agui_agents.js';
import { Migration20261203006001_webhook_endpoint_changes } from './Migration20261203006001_webhook_endpoint_changes.js';
import { Migration20261203006002_audit_full_verification_result } from './Migration20261203006002_audit_full_verification_result.js';
import { Migration20261203007000_delivery_claim } from './Migration20261203007000_delivery_claim.js';
import { Migration20261203008000_approval_version } from './Migration20261203008000_approval_version.js';
import { Migration20261204000100_audit_failure } from './Migration20261204000100_audit_failure.js';
import { Migration20261204002000_email_one_tenant } from './Migration20261204002000_email_one_tenant.js';
import { Migration20261204002100_token_person_lifecycle } from './Migration20261204002100_token_person_lifecycle.js';
import { Migration20261204005000_task_limits } from './Migration20261204005000_task_limits.js';
import { Migration20261205000100_decision_signature } from './Migration20261205000100_decision_signature.js';
import { Migration20261205000200_request_external_id } from './Migration20261205000200_request_external_id.js';
import { Migration20261205001000_command_rules } from './Migration20261205001000_command_rules.js';
import { Migration20261206000100_mcp_clients } from './Migration20261206000100_mcp_clients.js';
import { Migration20261207000100_mcp_server_removal } from './Migration20261207000100_mcp_server_removal.js';
import { Migration20261207002600_sign_in_links } from './Migration20261207002600_sign_in_links.js';

// Every committed migration, in the order of their names, which is the order they run in:
// MikroORM runs the pending ones of this list in list order and records each by name
// (mikro_orm_migrations), so a new migration gets a name after every other. Listed explicitly
// (not discovered from disk) so the same list runs under tsx, in tests and in a bundle.
// unit/migrations.test.ts checks the order against the files; integration/db/migration-order.test.ts
// that a database migrated in an earlier order reaches the same schema (docs/choices.md "Issue
// 24: one place per rule": why no migration was renamed).
export const migrationsList = [
  { name: 'Migration20261129000000_initial', class: Migration20261129000000_initial },
  { name: 'Migration20261130000000_command_approvals', class: Migration20261130000000_command_approvals },
  { name: 'Migration20261130000100_a2a_completeness', class: Migration20261130000100_a2a_completeness },
  { name: 'Migration20261130000200_card_snapshots_immutable', class: Migration20261130000200_card_snapshots_immutable },
  { name: 'Migration20261201000400_audit_signatures', class: Migration20261201000400_audit_signatures },
  { name: 'Migration20261201000500_agent_last_error', class: Migration20261201000500_agent_last_error },
  { name: 'Migration20261201000600_approver_scope', class: Migration20261201000600_approver_scope },
  { name: 'Migration20261201000700_sign_in_limit', class: Migration20261201000700_sign_in_limit },
  { name: 'Migration20261201000800_audit_event_xid', class: Migration20261201000800_audit_event_xid },
  { name: 'Migration20261201000900_task_replies', class: Migration20261201000900_task_replies },
  { name: 'Migration20261202000100_audit_verification', class: Migration20261202000100_audit_verification },
  { name: 'Migration20261202000110_inbox_indexes', class: Migration20261202000110_inbox_indexes },
  { name: 'Migration20261202000300_expiry_sweep', class: Migration20261202000300_expiry_sweep },
  { name: 'Migration20261202000310_auth_changes', class: Migration20261202000310_auth_changes },
  { name: 'Migration20261202000400_delivery_signature', class: Migration20261202000400_delivery_signature },
  { name: 'Migration20261202000500_webhooks', class: Migration20261202000500_webhooks },
  { name: 'Migration20261203000000_policy_contract', class: Migration20261203000000_policy_contract },
  { name: 'Migration20261203000200_grant_row_final', class: Migration20261203000200_grant_row_final },
  { name: 'Migration20261203001000_policies', class: Migration20261203001000_policies },
  { name: 'Migration20261203002000_quorum_votes', class: Migration20261203002000_quorum_votes },
  { name: 'Migration20261203003000_escalation', class: Migration20261203003000_escalation },
  { name: 'Migration20261203004000_execution_evidence', class: Migration20261203004000_execution_evidence },
  { name: 'Migration20261203005000_agui_agents', class: Migration20261203005000_agui_agents },
  { name: 'Migration20261203006001_webhook_endpoint_changes', class: Migration20261203006001_webhook_endpoint_changes },
  { name: 'Migration20261203006002_audit_full_verification_result', class: Migration20261203006002_audit_full_verification_result },
  { name: 'Migration20261203007000_delivery_claim', class: Migration20261203007000_delivery_claim },
  { name: 'Migration20261203008000_approval_version', class: Migration20261203008000_approval_version },
  { name: 'Migration20261204000100_audit_failure', class: Migration20261204000100_audit_failure },
  { name: 'Migration20261204002000_email_one_tenant', class: Migration20261204002000_email_one_tenant },
  { name: 'Migration20261204002100_token_person_lifecycle', class: Migration20261204002100_token_person_lifecycle },
  { name: 'Migration20261204005000_task_limits', class: Migration20261204005000_task_limits },
  { name: 'Migration20261205000100_decision_signature', class: Migration20261205000100_decision_signature },
  { name: 'Migration20261205000200_request_external_id', class: Migration20261205000200_request_external_id },
  { name: 'Migration20261205001000_command_rules', class: Migration20261205001000_command_rules },
  { name: 'Migration20261206000100_mcp_clients', class: Migration20261206000100_mcp_clients },
  { name: 'Migration20261207000100_mcp_server_removal', class: Migration20261207000100_mcp_server_removal },
  { name: 'Migration20261207002600_sign_in_links', class: Migration20261207002600_sign_in_links },
];
