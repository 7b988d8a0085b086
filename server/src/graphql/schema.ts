import { builder } from './builder.js';
import '../auth/graphql.js';
import '../auth/grant-admin-graphql.js';
import '../agents/graphql.js';
import '../tasks/graphql.js';
import '../tasks/waiting-graphql.js';
import '../tasks/agui-graphql.js';
import '../approvals/graphql.js';
import '../approvals/console-graphql.js';
import '../decisions/graphql.js';
import '../delivery/graphql.js';
import '../audit/graphql.js';
import '../contract/graphql.js';
import '../audit/verification-graphql.js';
import '../commands/graphql.js';
import '../webhooks/graphql.js';

export const schema = builder.toSchema({ sortSchema: false });
