import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { loadAuditSigningKey, registerAuditSigner, AuditPins, registerAuditPins, registerAppendedEventsHook } from './audit/module.js';
import { loadApprovalKeys } from './approval-signing/module.js';
import {
  bootstrapAdmin,
  viewerForToken,
  warnOfDuplicateEmails,
  credentialEnds,
  viewerForSession,
  type SessionContext,
  AUTH_CHANNEL,
  registerViewerCache,
  ViewerCache,
} from './auth/module.js';
import { Access } from './access.js';
import { sessionFromCookie } from './http/session-cookie.js';
import { CSRF_HEADER, serveConsole } from './http/console.js';
import type { Config } from './config.js';
import { openOrm } from './db/orm.js';
import { prepareDatabase } from './db/roles.js';
import { realDeps, type Deps, type NetworkOverrides } from './deps.js';
import { startWorker, type Worker } from './jobs/worker.js';
import { createLoaders } from './graphql/loaders.js';
import { ENTITIES, MODULE_JOBS, MODULE_ROUTES, schema, startModules } from './modules.js';
import { listenForEvents, type EventListener } from './events/listener.js';
import { createTaskbayPubSub, type TaskbayPubSub } from './events/pubsub.js';
import type { Context } from './graphql/context.js';
import { createMaskError } from './graphql/mask-error.js';
import { useStorableInput } from './graphql/storable-input.js';
import { boundedParseCaches, useGraphqlLimits } from './graphql/limits.js';
import { graphiqlYogaOptions } from './graphql/graphiql.js';
import { graphqlWsOptions } from './graphql/ws.js';
import { CredentialWatch, useLiveCredentialsOverHttp, type Credential } from './graphql/credential-watch.js';
import { ConnectionCounts, useHttpSubscriptionCaps } from './graphql/connection-caps.js';
import { useSharedSubscriptionEvents } from './graphql/shared-events.js';
import { corsYogaOptions } from './http/cors.js';
import { useResponseCompression } from './http/compression.js';
import { dispatch, healthzRoute, isApiPath, sendApiNotFound } from './http/dispatch.js';
import type { Route } from './http/route.js';
import { bearer, connectionToken } from './http/json.js';
import { startObservability } from './observability/index.js';
import { observabilityRoutes } from './observability/routes.js';

// One Taskbay instance: HTTP and WebSocket GraphQL on one port and path, the LISTEN loop, and
// the job worker. Stateless: everything it knows is in Postgres.

export interface TaskbayInstance {
  url: string;
  port: number;
  orm: MikroORM;
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  pubsub: TaskbayPubSub;
  deps: Deps;
  /** The admin this start made (an empty database, or a new TASKBAY_ADMIN_EMAIL with TASKBAY_ADMIN_TOKEN). */
  bootstrap: { email: string } | null;
  stop(): Promise<void>;
}

export async function startInstance(
  config: Config,
  databaseUrl: string,
  opts: { worker?: boolean; deps?: Deps; listen?: boolean; network?: NetworkOverrides; migrationDatabaseUrl?: string | null } = {},
): Promise<TaskbayInstance> {
  // The keys first: a bad key setting or file fails the start before anything opens.
  const auditSigner = loadAuditSigningKey(config);
  const approvalKeys = await loadApprovalKeys(config);
  // databaseUrl is the runtime (app) role: ORM, LISTEN loop and worker; migrations run as the
  // owner role of migrationDatabaseUrl when given (see db/roles.ts).
  await prepareDatabase({ appUrl: databaseUrl, ownerUrl: opts.migrationDatabaseUrl });
  const orm = await openOrm(databaseUrl, undefined, ENTITIES);
  registerAuditSigner(orm, auditSigner);
  // What the database must still hold, kept beside the key (audit/pin.ts).
  registerAuditPins(orm, await AuditPins.open(config.auditPinDir, auditSigner, orm.em.fork()));
  // Each module's part of this instance (module-kit.ts `start`): its caches, channels, the work
  // that commits with appended audit events (webhooks queue their deliveries there), its sweepers.
  let barrier: EventListener | null = null;
  const running = startModules({ config, orm, barrier: () => barrier });
  registerAppendedEventsHook(orm, running.appendedEvents);
  const bootstrap = await bootstrapAdmin(orm.em.fork(), { adminToken: config.adminToken, adminEmail: config.adminEmail });
  await warnOfDuplicateEmails(orm.em.fork());
  const deps = opts.deps ?? realDeps(config, approvalKeys, { databaseUrl, network: opts.network });
  const pubsub = createTaskbayPubSub();
  const observability = await startObservability(config, orm);
  deps.inFlight.traceWith(observability.traceBackground);
  // Live subscriptions end when their credential stops holding (graphql/credential-watch.ts).
  const viewerOfCredential = (c: Credential) => {
    const em = orm.em.fork();
    return c.token ? viewerForToken(em, c.token) : c.session ? viewerForSession(em, c.session) : Promise.resolve(null);
  };
  const liveCredentials = new CredentialWatch({ viewerFor: viewerOfCredential, expiryOf: (c) => credentialEnds(orm.em.fork(), c) });
  const listener: EventListener = listenForEvents(databaseUrl, pubsub, {
    onReconnect: observability.onListenerReconnect,
    onEvent: running.onEvent,
    channels: {
      [AUTH_CHANNEL]: (userId) => {
        viewers.invalidateUser(userId);
        // After the cache: the live connections' checks read the change, not a remembered viewer.
        liveCredentials.userChanged(userId);
      },
      ...running.channels,
    },
  });
  barrier = listener;
  // Tokens and sessions resolve from memory while the LISTEN loop keeps them fresh.
  const viewers = new ViewerCache(listener);
  registerViewerCache(orm, viewers);
  await listener.ready;

  // An API token (Bearer header, or connectionParams / upgrade header on WebSocket) wins; otherwise the console's
  // session cookie. Response cookies are collected per request and added by the plugin below.
  const pendingCookies = new WeakMap<Request, string[]>();
  const cookieSecure = config.publicUrl.startsWith('https:');
  const buildContext = async (token: string | null, session: string | null, request?: Request): Promise<Context & SessionContext> => {
    const em = orm.em.fork();
    const viewer = token ? await viewerForToken(em, token) : session ? await viewerForSession(em, session) : null;
    const ctx: Context & SessionContext = { em, deps, pubsub, viewer, access: viewer ? new Access(em, viewer) : null, loaders: createLoaders(em) };
    ctx.sessionSecret = session;
    ctx.credential = { token, session };
    ctx.cookieSecure = cookieSecure;
    if (request) {
      const cookies: string[] = [];
      pendingCookies.set(request, cookies);
      ctx.setCookie = (c) => cookies.push(c);
    }
    return ctx;
  };

  const limits = config.graphqlLimits;
  // WebSockets and SSE subscriptions, per client address and per viewer (graphql/connection-caps.ts).
  const connections = new ConnectionCounts({
    maxUnauthenticatedPerAddress: config.wsMaxUnauthenticatedPerAddress,
    maxConnectionsPerAddress: config.wsMaxConnectionsPerAddress,
    maxSubscriptions: config.wsMaxSubscriptions,
    operationsPerSecond: config.wsOperationsPerSecond,
  });
  const graphiql = graphiqlYogaOptions(config.graphiql);
  const cors = corsYogaOptions(config.corsOrigins);
  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: graphiql.graphiql,
    ...(graphiql.renderGraphiQL ? { renderGraphiQL: graphiql.renderGraphiQL } : {}),
    cors: cors.cors,
    logging: false,
    landingPage: false,
    // Yoga checks Content-Length first, then counts a chunked body while reading it (413).
    maxRequestBodySize: limits.maxBodyBytes,
    parserAndValidationCache: boundedParseCaches(),
    maskedErrors: { maskError: createMaskError(limits) },
    plugins: [
      // First: the nesting of variables is checked before anything walks them recursively.
      ...useGraphqlLimits(limits),
      useStorableInput(),
      useSharedSubscriptionEvents(),
      // After the shared events: it counts each subscriber over HTTP (SSE), not each shared stream.
      useHttpSubscriptionCaps(connections),
      // Each subscriber over HTTP ends when its credential stops holding, as a socket does.
      useLiveCredentialsOverHttp(liveCredentials),
      // A cookie-authenticated browser request must carry a non-simple content type or this
      // header, so a cross-site form or GET cannot act as the signed-in reviewer.
      useCSRFPrevention({ requestHeaders: [CSRF_HEADER] }),
      {
        onResponse({ request, response }) {
          for (const c of pendingCookies.get(request) ?? []) response.headers.append('set-cookie', c);
        },
      },
      ...graphiql.plugins,
      ...cors.plugins,
      observability.yogaPlugin,
      // Last: it compresses the response the others have finished (http/compression.ts).
      useResponseCompression(),
    ],
    context: async (initial) => {
      const params = (initial as { connectionParams?: Record<string, unknown> }).connectionParams;
      // graphql-ws contexts carry `extra` (see onSubscribe below); HTTP ones a Fetch Request.
      const ws = (initial as { extra?: { request: { headers: Record<string, string | string[] | undefined> } } }).extra;
      if (ws) {
        const upgrade = ws.request;
        // graphql-ws: the token onConnect accepted, else the cookie of the upgrade request.
        const token = connectionToken(params, upgrade.headers) || null;
        const cookie = upgrade?.headers.cookie;
        return buildContext(token, token ? null : sessionFromCookie(typeof cookie === 'string' ? cookie : null));
      }
      const request = (initial as { request?: Request }).request;
      const token = bearer(request?.headers.get('authorization'));
      const ctx = await buildContext(token, token ? null : sessionFromCookie(request?.headers.get('cookie')), request);
      ctx.clientAddress = (initial as { req?: { socket?: { remoteAddress?: string } } }).req?.socket?.remoteAddress ?? null;
      return ctx;
    },
  });

  // The plain HTTP endpoints next to /graphql: the instance's own, then the modules' (modules.ts); the first match serves.
  const routes: readonly Route[] = [healthzRoute, ...observabilityRoutes(observability), ...MODULE_ROUTES];
  const routeContext = { orm, deps, pubsub, viewerForToken };
  const server: Server = createServer(
    observability.observeRequests((req, res) => {
      if (req.url?.startsWith(yoga.graphqlEndpoint)) {
        void yoga(req, res);
        return;
      }
      void dispatch(routes, req, res, routeContext).then(async (handled) => {
        if (handled) return;
        if (isApiPath((req.url ?? '/').split('?')[0]!)) return sendApiNotFound(req, res);
        // The reviewer console (web/dist) at / with an SPA fallback; the API stays at /graphql.
        if (await serveConsole(req, res, PLACEHOLDER_PAGE)) return;
        void yoga(req, res);
      });
    }),
  );
  // One WebSocket message may be as large as one HTTP body; ws closes the socket (1009) beyond.
  const wsOptions = graphqlWsOptions({
    yoga,
    limits: {
      maxSubscriptions: config.wsMaxSubscriptions,
      operationsPerSecond: config.wsOperationsPerSecond,
      maxInputDepth: limits.maxInputDepth,
      authGraceMs: config.wsAuthGraceMs,
    },
    connections,
    viewerFor: viewerOfCredential,
    watch: liveCredentials,
  });
  const wss = new WebSocketServer({ server, path: yoga.graphqlEndpoint, maxPayload: limits.maxBodyBytes, verifyClient: wsOptions.verifyClient });
  wss.on('connection', wsOptions.socketOpened);
  const wsServer = useServer(wsOptions, wss);

  let worker: Worker | null = null;
  if (opts.worker !== false) {
    worker = await startWorker(orm, deps, databaseUrl, MODULE_JOBS, observability.wrapJobs);
    running.startBackground();
  }
  observability.watch({ listener, worker: () => worker, ws: wsOptions });

  // In this order: nothing new comes in, then what works in the background stops, and only
  // then the database connections close (the embedded Postgres stops after all of this).
  const stop = async () => {
    await wsServer.dispose();
    wss.close();
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections();
    await closed;
    // Deliveries sent right after their decision (delivery/direct.ts) finish before the database closes.
    await deps.inFlight.drain();
    await running.stop();
    await worker?.stop();
    await listener.close();
    await orm.close(true);
    if (!opts.deps) await deps.network.close();
    await observability.stop();
  };

  let port = config.port;
  if (opts.listen !== false) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => resolve());
      });
    } catch (e) {
      // The port is taken (say): close what started, so the caller can stop the database.
      await stop();
      throw e;
    }
    port = (server.address() as AddressInfo).port;
    // PORT=0 picks a port only now: agent URLs must not reach it either.
    deps.network.protectOwnPort(port);
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    orm,
    yoga,
    pubsub,
    deps,
    bootstrap,
    stop,
  };
}

const PLACEHOLDER_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Taskbay</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>Taskbay</h1><p>The GraphQL API is at <a href="/graphql">/graphql</a>.
Send <code>Authorization: Bearer &lt;token&gt;</code>.</p></body></html>`;
