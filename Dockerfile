# The order service's image: one image, two commands (the worker and the API), run by docker-compose.yml.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# Dependencies first (cached while only the code changes). The postinstall generates the Prisma client
# from prisma/schema.prisma; dev dependencies stay: `npm run db:deploy` needs the Prisma CLI. The
# postinstall script's own imports (dev/, lib/) come first too; a test checks that list.
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY dev ./dev
COPY lib ./lib
RUN npm ci --include=dev && npm cache clean --force
COPY . .
USER node
# The API (default); the workers run `node --import tsx worker/main.ts`, migrations `npm run db:deploy`.
EXPOSE 3000 9464
CMD ["node", "--import", "tsx", "api/server.ts"]
