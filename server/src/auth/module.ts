import type { EntityManager } from '@mikro-orm/postgresql';
import { byId } from '../graphql/loaders.js';
import { AgentGrant } from './agent-grant-entity.js';
import { ApiToken, SignInLink, Tenant, User, WebSession, type UserRow } from './entities.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import './audit-graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { UserRef } from './graphql.js';
export { bootstrapAdmin, grantAgentAccess, viewerForToken, warnOfDuplicateEmails } from './service.js';
export { listGrants, revokeGrant } from './grant-admin.js';
export { type IssuedSignInLink, startupSignInLink } from './sign-in-links.js';
export { reviewerName } from './reviewer-name.js';
export type { AgentGrantRow } from './agent-grant-entity.js';
export { credentialEnds, type SessionContext, viewerForSession } from './session.js';
export { AUTH_CHANNEL, registerViewerCache, ViewerCache } from './viewer-cache.js';
export { authorize, authorizeAgent, canOperate, canView, canViewAgent, visibleFilter } from './visibility.js';

// Tenants, people, API tokens, console sessions and agent grants: who is signed in and as whom.

const loaders = (em: EntityManager) => ({ user: byId<UserRow>(em, User) });
type AuthLoaders = ReturnType<typeof loaders>;
declare module '../graphql/loaders.js' {
  interface Loaders extends AuthLoaders {}
}

export const authModule = defineModule({
  name: 'auth',
  entities: [Tenant, User, ApiToken, WebSession, SignInLink, AgentGrant],
  loaders,
});
