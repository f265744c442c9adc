# The order service's images, built in stages (docker-compose.yml picks the target):
#   build    — every dependency, the Prisma client generated, `npm run build` (dist/, workflow bundle)
#   migrate  — runs `npm run db:deploy` (the Prisma CLI and its schema engine are dev dependencies);
#              compose's demo (docker-compose.demo.yml) adds `npm run db:fakes` and runs the local
#              stack's entries, dev/worker.ts and dev/api.ts, from this image
#   runtime  — production dependencies only, the compiled service (nothing of dev/: `npm run build`
#              compiles none of it), no TypeScript at run time
# Node 24 LTS (24.18.0 at this digest). The digest, not the tag, so a rebuild gets the same base; move
# it on deliberately (`docker buildx imagetools inspect node:24-bookworm-slim` shows the current one),
# and CI runs the fast tier and the compiled service on Node 24 (`npm run test:node24`).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first (cached while only the code changes). The postinstall generates the Prisma client
# from prisma/schema.prisma; its own imports (dev/, lib/) come first too — a test checks that list.
# bench/, a workspace of its own, is not among them: npm ci then installs none of the bench's packages.
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY dev ./dev
COPY lib ./lib
RUN npm ci && npm cache clean --force
COPY . .
RUN npm run build

FROM build AS migrate
USER node
CMD ["npm", "run", "db:deploy"]

FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# No install scripts: the only one that matters, the Prisma client's generation, ran in the build stage.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/node_modules/.prisma ./node_modules/.prisma
COPY --from=build /app/dist ./dist
USER node
# The API (default); the workers run `node dist/worker/main.js`.
EXPOSE 3000 9464
CMD ["node", "dist/api/server.js"]
