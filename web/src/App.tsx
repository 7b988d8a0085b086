import { Suspense } from 'react';
import { useMutation, useQuery } from 'urql';
import { AuditAlert } from './components/AuditAlert';
import { ConnectionBanner } from './components/ConnectionBanner';
import { graphql } from './gql';
import { lazyPage } from './lib/lazy-page';
import { Link, useRouter } from './lib/router';
import { ApprovalPage } from './pages/Approval';
import { InboxPage } from './pages/Inbox';
import { SignInPage } from './pages/SignIn';

// The reviewer's pages (sign-in, inbox, an approval) come with the first load; the others are
// fetched when first opened, so the first load stays small (docs/PERFORMANCE.md, console bytes).
const TaskPage = lazyPage(() => import('./pages/Task').then((m) => m.TaskPage));
const TasksPage = lazyPage(() => import('./pages/Tasks').then((m) => m.TasksPage));
const AgentsPage = lazyPage(() => import('./pages/Agents').then((m) => m.AgentsPage));
const PeoplePage = lazyPage(() => import('./pages/People').then((m) => m.PeoplePage));
const WebhooksPage = lazyPage(() => import('./pages/Webhooks').then((m) => m.WebhooksPage));
const PoliciesPage = lazyPage(() => import('./pages/Policies').then((m) => m.PoliciesPage));
const GroupsPage = lazyPage(() => import('./pages/Groups').then((m) => m.GroupsPage));
const McpServersPage = lazyPage(() => import('./pages/McpServers').then((m) => m.McpServersPage));
const SetPasswordPage = lazyPage(() => import('./pages/SetPassword').then((m) => m.SetPasswordPage));

const ViewerQuery = graphql(`
  query Viewer {
    viewer {
      id
      name
      email
      role
    }
  }
`);

const SignOutMutation = graphql(`
  mutation SignOut {
    signOut
  }
`);

export function App() {
  const [{ data, fetching, error }] = useQuery({ query: ViewerQuery, requestPolicy: 'network-only' });
  const [, signOut] = useMutation(SignOutMutation);
  const { path } = useRouter();
  // A one-time sign-in link's page, whoever is signed in: it is for the person it names.
  if (path.split('?')[0] === '/set-password') {
    return (
      <Suspense fallback={<p className="loading">Loading…</p>}>
        <SetPasswordPage />
      </Suspense>
    );
  }
  if (fetching && !data) return <p className="loading">Loading…</p>;
  if (error && !data) return <p className="error">{`Cannot reach the server: ${error.message}`}</p>;
  const viewer = data?.viewer;
  if (!viewer) return <SignInPage />;
  const [pathname] = path.split('?');
  const seg = pathname!.split('/').filter(Boolean).map(decodeURIComponent);
  let page;
  if (seg.length === 0) page = <InboxPage viewerId={viewer.id} />;
  else if (seg[0] === 'approvals' && seg[1]) page = <ApprovalPage id={seg[1]} viewerId={viewer.id} />;
  else if (seg[0] === 'tasks' && seg[1]) page = <TaskPage id={seg[1]} />;
  else if (seg[0] === 'tasks') page = <TasksPage />;
  else if (seg[0] === 'agents') page = <AgentsPage isAdmin={viewer.role === 'ADMIN'} />;
  else if (seg[0] === 'people' && viewer.role === 'ADMIN') page = <PeoplePage />;
  else if (seg[0] === 'webhooks' && viewer.role === 'ADMIN') page = <WebhooksPage />;
  else if (seg[0] === 'policies' && viewer.role === 'ADMIN') page = <PoliciesPage />;
  else if (seg[0] === 'groups' && viewer.role === 'ADMIN') page = <GroupsPage />;
  else if (seg[0] === 'mcp-servers' && viewer.role === 'ADMIN') page = <McpServersPage />;
  else page = <p>Not found.</p>;
  const nav = (to: string, label: string) => (
    <Link to={to} aria-current={(to === '/' ? pathname === '/' : pathname!.startsWith(to)) ? 'page' : undefined}>
      {label}
    </Link>
  );
  return (
    <>
      <header className="top">
        <strong className="brand">Taskbay</strong>
        <nav aria-label="Main">
          {nav('/', 'Inbox')}
          {nav('/tasks', 'Tasks')}
          {nav('/agents', 'Agents')}
          {viewer.role === 'ADMIN' && nav('/people', 'People')}
          {viewer.role === 'ADMIN' && nav('/webhooks', 'Webhooks')}
          {viewer.role === 'ADMIN' && nav('/policies', 'Policies')}
          {viewer.role === 'ADMIN' && nav('/groups', 'Groups')}
          {viewer.role === 'ADMIN' && nav('/mcp-servers', 'MCP servers')}
        </nav>
        <span className="who">{viewer.email}</span>
        <button
          type="button"
          className="link"
          onClick={async () => {
            await signOut({});
            location.assign('/');
          }}
        >
          Sign out
        </button>
      </header>
      <ConnectionBanner />
      {viewer.role === 'ADMIN' && <AuditAlert />}
      <main>
        <Suspense fallback={<p className="loading">Loading…</p>}>{page}</Suspense>
      </main>
    </>
  );
}
