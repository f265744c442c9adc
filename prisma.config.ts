import { defineConfig } from 'prisma/config';
import { PrismaPg } from '@prisma/adapter-pg';

// Prisma's native schema engine is downloaded from Prisma's own servers, which many build
// machines cannot reach. `engine: 'js'` runs migrations through the WebAssembly schema engine
// that ships in the npm package, talking to PostgreSQL through the same pg adapter as the app.
// Hence the pin in package.json, two majors on purpose: `prisma` and `@prisma/client` stay on 6.19,
// the last whose migrate runs on that WebAssembly engine (Prisma 7's needs the native one), and
// `@prisma/adapter-pg` is 7.x, because 6.19's cannot read Postgres's `name` columns, which the
// schema engine's introspection selects. Change one only with the others, and run the migrations.
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
