import { UserRef } from '../auth/module.js';
import { builder } from '../graphql/builder.js';
import type { COMMAND_RULE_OUTCOMES, CommandRule } from './rules.js';
import { getCommandRules, setCommandRules, type CommandRulesView } from './rules-service.js';

// A tenant's command rules in the API, for admins only (docs/COMMAND-APPROVALS.md "Which
// commands wait"): read them, and replace them whole.

const CommandRuleOutcomeEnum = builder.enumType('CommandRuleOutcome', {
  description: 'What a matching command rule does with a tool call.',
  values: {
    ASK: { description: "The call waits for a person's decision in Taskbay (a command approval); another tool than the shell is denied." },
    ALLOW: { description: "Taskbay does not hold the call: the host's own permissions decide (the hook answers nothing)." },
    DENY: { description: "The call is denied with the rule's reason." },
  } satisfies Record<(typeof COMMAND_RULE_OUTCOMES)[number], unknown>,
});

const CommandRuleRef = builder.objectRef<CommandRule>('CommandRule').implement({
  description: 'One command rule: the first whose condition is true decides.',
  fields: (t) => ({
    condition: t.exposeString('condition', {
      description: 'CEL over the tool call (command, scope, tool, host, event, cwd, permissionMode, agent.id, agent.type); empty matches every call.',
    }),
    outcome: t.field({ type: CommandRuleOutcomeEnum, resolve: (r) => r.outcome }),
    reason: t.exposeString('reason', { nullable: true }),
  }),
});

const CommandRulesRef = builder.objectRef<CommandRulesView>('CommandRules').implement({
  description: "A tenant's command rules. None matching: a shell command waits for a person (ASK); another tool is left to the host.",
  fields: (t) => ({
    rules: t.field({ type: [CommandRuleRef], resolve: (v) => v.rules }),
    version: t.exposeInt('version', { description: 'How many times the rules were saved (0: never).' }),
    updatedAt: t.field({ type: 'DateTime', nullable: true, resolve: (v) => v.updatedAt }),
    updatedBy: t.field({ type: UserRef, nullable: true, resolve: (v, _a, ctx) => (v.updatedById ? ctx.loaders.user.load(v.updatedById) : null) }),
  }),
});

const CommandRuleInput = builder.inputType('CommandRuleInput', {
  fields: (t) => ({
    condition: t.string({ required: true, description: 'CEL over the tool call; empty matches every call.' }),
    outcome: t.field({ type: CommandRuleOutcomeEnum, required: true }),
    reason: t.string({ description: "Shown with the outcome; a DENY's reason is what the agent reads." }),
  }),
});

builder.queryFields((t) => ({
  commandRules: t.withAuth({ admin: true }).field({
    type: CommandRulesRef,
    description: "The tenant's command rules, in the order they are tried (admins).",
    resolve: (_r, _a, ctx) => getCommandRules(ctx.em, ctx.access),
  }),
}));

builder.mutationFields((t) => ({
  setCommandRules: t.withAuth({ admin: true }).field({
    type: CommandRulesRef,
    description: "Replaces the tenant's command rules (checked whole: a condition that does not compile is BAD_USER_INPUT and nothing is saved).",
    args: { rules: t.arg({ type: [CommandRuleInput], required: true }) },
    resolve: (_r, { rules }, ctx) =>
      setCommandRules(
        ctx.em,
        ctx.access,
        rules.map((r) => ({ condition: r.condition, outcome: r.outcome, reason: r.reason ?? null })),
      ),
  }),
}));
