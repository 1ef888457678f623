# Synthex in production: Next's standalone output, run as a non-root user.
# Docker is not available on the machine this repository is developed on: this file is kept
# minimal and what can be verified without Docker is (see README "Deploy").
#
#   docker build -t synthex .                                   # the app: node server.js
#   docker build --target build -t synthex-tools .              # migrations, the worker, the CLI (tsx)
#   docker run --env-file .env synthex-tools npm run db:migrate
#   docker run --env-file .env synthex-tools npm run worker
#   docker run -p 3000:3000 --env-file .env synthex

# 1. dependencies (postinstall runs `prisma generate`, which needs the schema and config)
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
RUN npm install --no-audit --no-fund

# 2. build: standalone output (.next/standalone with a traced node_modules and server.js)
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1 SYNTHEX_STANDALONE=1
COPY --from=deps /app/node_modules ./node_modules
COPY . .
RUN npx prisma generate && npx next build

# 3. runtime: only the standalone server and its static files (migrations run from the build stage)
FROM node:20-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 PORT=3000 HOSTNAME=0.0.0.0
RUN groupadd --system --gid 1001 synthex && useradd --system --uid 1001 --gid synthex synthex
COPY --from=build --chown=synthex:synthex /app/.next/standalone ./
COPY --from=build --chown=synthex:synthex /app/.next/static ./.next/static
COPY --from=build --chown=synthex:synthex /app/public ./public
USER synthex
EXPOSE 3000
CMD ["node", "server.js"]
