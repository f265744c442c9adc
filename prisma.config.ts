import { defineConfig } from 'prisma/config';
import { PrismaPg } from '@prisma/adapter-pg';

// Prisma's native schema engine is downloaded from Prisma's own servers, which many build
// machines cannot reach. `engine: 'js'` runs migrations through the WebAssembly schema engine
// that ships in the npm package, talking to PostgreSQL through the same pg adapter as the app.
// (The 7.x adapter is deliberate: the 6.19 one cannot read Postgres's `name` columns, which the
// schema engine's introspection selects.)
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  experimental: { adapter: true },
  engine: 'js',
  async adapter() {
    // allowExitOnIdle: a CLI run exits as soon as it is done instead of waiting out the idle pool.
    return new PrismaPg({ connectionString: process.env.DATABASE_URL, allowExitOnIdle: true });
  },
});
