import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { Runner } from 'graphile-worker';
import { Access } from './auth/access.js';
import { bootstrapAdmin, viewerForToken } from './auth/service.js';
import type { Config } from './config.js';
import { migrate, openOrm } from './db/orm.js';
import { realDeps, type Deps } from './deps.js';
import { startWorker } from './delivery/worker.js';
import { listenForEvents, type EventListener } from './events/listener.js';
import { createTaskbayPubSub, type TaskbayPubSub } from './events/pubsub.js';
import type { Context } from './graphql/context.js';
import { createLoaders } from './graphql/loaders.js';
import { schema } from './graphql/schema.js';
import { maskError } from './graphql/mask-error.js';
import { dispatch } from './http/routes.js';

// One Taskbay instance: HTTP and WebSocket GraphQL on one port and path, the LISTEN loop, and
// the job worker. Stateless: everything it knows is in Postgres.

export interface TaskbayInstance {
  url: string;
  port: number;
  orm: MikroORM;
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  pubsub: TaskbayPubSub;
  deps: Deps;
  /** The one-time password of a freshly bootstrapped admin (printed once by the CLI). */
  bootstrap: { email: string; password: string } | null;
  stop(): Promise<void>;
}

function bearer(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = /^Bearer\s+(\S+)$/i.exec(value.trim());
  return m ? m[1]! : null;
}

export async function startInstance(
  config: Config,
  databaseUrl: string,
  opts: { worker?: boolean; deps?: Deps; listen?: boolean } = {},
): Promise<TaskbayInstance> {
  const orm = await openOrm(databaseUrl);
  await migrate(orm, databaseUrl);
  const bootstrap = await bootstrapAdmin(orm.em.fork(), { adminToken: config.adminToken, adminEmail: config.adminEmail });
  const deps = opts.deps ?? realDeps(config);
  const pubsub = createTaskbayPubSub();
  const listener: EventListener = listenForEvents(databaseUrl, pubsub);
  await listener.ready;

  const buildContext = async (token: string | null): Promise<Context> => {
    const em = orm.em.fork();
    const viewer = token ? await viewerForToken(em, token) : null;
    return { em, deps, pubsub, viewer, access: viewer ? new Access(em, viewer) : null, loaders: createLoaders(em) };
  };

  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: { subscriptionsProtocol: 'WS' },
    logging: false,
    landingPage: false,
    maskedErrors: { maskError },
    context: async (initial) => {
      const request = (initial as { request?: Request }).request;
      const params = (initial as { connectionParams?: Record<string, unknown> }).connectionParams;
      return buildContext(bearer(params?.authorization) ?? bearer(request?.headers.get('authorization')));
    },
  });

  const routeContext = { orm, deps, pubsub };
  const server: Server = createServer((req, res) => {
    if (req.url === '/' || req.url === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PLACEHOLDER_PAGE);
      return;
    }
    if (req.url?.startsWith(yoga.graphqlEndpoint)) {
      void yoga(req, res);
      return;
    }
    void dispatch(req, res, routeContext).then((handled) => {
      if (!handled) void yoga(req, res);
    });
  });
  const wss = new WebSocketServer({ server, path: yoga.graphqlEndpoint });
  const wsServer = useServer(
    {
      // Same plugins, context and parse/validate cache as HTTP (Yoga's graphql-ws recipe).
      execute: (args: any) => args.rootValue.execute(args),
      subscribe: (args: any) => args.rootValue.subscribe(args),
      onConnect: async (ctx) => {
        const token = bearer(ctx.connectionParams?.authorization);
        if (ctx.connectionParams?.authorization !== undefined && !token) return false;
        if (token && !(await viewerForToken(orm.em.fork(), token))) return false;
        return true;
      },
      onSubscribe: async (ctx, _id, params) => {
        const { schema: s, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
        });
        const args = {
          schema: s,
          operationName: params.operationName,
          document: parse(params.query),
          variableValues: params.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
        const errors = validate(args.schema, args.document);
        if (errors.length) return errors;
        return args;
      },
    },
    wss,
  );

  let worker: Runner | null = null;
  if (opts.worker !== false) worker = await startWorker(orm, deps, databaseUrl);

  let port = config.port;
  if (opts.listen !== false) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    port = (server.address() as AddressInfo).port;
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    orm,
    yoga,
    pubsub,
    deps,
    bootstrap,
    async stop() {
      await wsServer.dispose();
      wss.close();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
      await worker?.stop();
      await listener.close();
      await orm.close(true);
    },
  };
}


const PLACEHOLDER_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Taskbay</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>Taskbay</h1><p>The GraphQL API (with GraphiQL) is at <a href="/graphql">/graphql</a>.
Send <code>Authorization: Bearer &lt;token&gt;</code>.</p></body></html>`;
