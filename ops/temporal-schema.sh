#!/bin/sh
# Compose's one-shot `temporal-schema`: creates Temporal's two databases on the stack's PostgreSQL
# and brings their schemas to the version the admin-tools image ships, which matches the server's.
# Idempotent: `create` of an existing database fails harmlessly, setup-schema/update-schema skip
# what is applied already.
set -eu
SCHEMA=/etc/temporal/schema/postgresql/v12
# The tool reads the password from SQL_PASSWORD: on its command line (--pw) `ps` would show it.
export SQL_PASSWORD="$POSTGRES_PWD"
for db in temporal temporal_visibility; do
  dir=temporal; [ "$db" = temporal_visibility ] && dir=visibility
  sql() { temporal-sql-tool --plugin postgres12 --ep postgres -p 5432 -u "$POSTGRES_USER" --db "$db" "$@"; }
  sql create || true
  sql setup-schema -v 0.0
  sql update-schema -d "$SCHEMA/$dir/versioned"
done
