import pg from 'pg';

/**
 * The parts of a database's public schema that Prisma manages, as sorted lines, so two databases
 * can be compared (and a difference read) line by line: tables and columns with type, nullability
 * and default; indexes; constraints; enum types with their labels in order. Column order is left
 * out on purpose: a migration that adds a column appends it, a fresh database does not.
 */
export async function catalogSnapshot(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const lines: string[] = [];
    const query = async (sql: string, line: (row: Record<string, string>) => string) =>
      lines.push(...(await client.query<Record<string, string>>(sql)).rows.map(line));
    await query(
      `SELECT c.relname AS "table", a.attname AS "column", format_type(a.atttypid, a.atttypmod) AS "type",
              CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END AS "notNull",
              COALESCE(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '') AS "default"
         FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
          AND a.attnum > 0 AND NOT a.attisdropped AND c.relname <> '_prisma_migrations'`,
      (r) => `column ${r.table}.${r.column} ${r.type}${r.notNull}${r.default}`,
    );
    await query(
      `SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`,
      (r) => `index ${r.tablename}.${r.indexname}: ${r.indexdef}`,
    );
    // NOT NULL constraints (contype 'n', PostgreSQL 18) are covered by the columns above.
    await query(
      `SELECT conrelid::regclass::text AS "table", conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
        WHERE connamespace = 'public'::regnamespace AND conrelid <> 0 AND contype <> 'n'
          AND conrelid::regclass::text <> '_prisma_migrations'`,
      (r) => `constraint ${r.table}.${r.conname}: ${r.def}`,
    );
    await query(
      `SELECT t.typname, string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder) AS labels
         FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
        WHERE t.typnamespace = 'public'::regnamespace GROUP BY t.typname`,
      (r) => `enum ${r.typname}: ${r.labels}`,
    );
    return lines.sort();
  } finally {
    await client.end();
  }
}
