#!/bin/sh
# First start of the postgres container (mounted into /docker-entrypoint-initdb.d): Taskbay's owner
# and app roles and database, with the passwords docker-compose.yml passes in (no defaults).
set -e
psql --username "$POSTGRES_USER" --dbname postgres \
  -v owner_password="$TASKBAY_OWNER_DB_PASSWORD" -v app_password="$TASKBAY_APP_DB_PASSWORD" \
  -f /taskbay/roles.sql
