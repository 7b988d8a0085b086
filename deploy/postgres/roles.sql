-- Taskbay's two Postgres roles (least privilege), for an external Postgres. Run once as a superuser:
--
--   psql "postgres://postgres@HOST:5432/postgres" \
--     -v owner_password="$TASKBAY_OWNER_DB_PASSWORD" -v app_password="$TASKBAY_APP_DB_PASSWORD" \
--     -f deploy/postgres/roles.sql
--
-- then start Taskbay with
--
--   DATABASE_URL=postgres://taskbay_app:APP_PASSWORD@HOST:5432/taskbay
--   TASKBAY_MIGRATION_DATABASE_URL=postgres://taskbay_owner:OWNER_PASSWORD@HOST:5432/taskbay
--
-- (passwords that need no escaping in a URL, e.g. `openssl rand -hex 24`). The owner role runs the
-- migrations and owns every table; after migrating, Taskbay grants the app role exactly what the
-- server needs, derived from the catalog (server/src/db/roles.ts): rows of the tables, but never
-- ALTER, TRUNCATE, DISABLE TRIGGER, UPDATE or DELETE of the audit log. The app role is not a
-- superuser and a member of no role, so it cannot run COPY ... PROGRAM either. The docker-compose
-- setup runs this file on the first start of its postgres container.
\set ON_ERROR_STOP on

CREATE ROLE taskbay_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS
  PASSWORD :'owner_password';
CREATE ROLE taskbay_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS
  PASSWORD :'app_password';
CREATE DATABASE taskbay OWNER taskbay_owner;

\connect taskbay
-- Only the owner creates objects (the default from Postgres 15 on; explicit for older servers).
ALTER SCHEMA public OWNER TO taskbay_owner;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
