# syntax=docker/dockerfile:1
# Switchyard's headless server for a team: one shared gateway (the proxy for agents, the dashboard
# and management API behind the management token) in a container.
#   docker build -t switchyard .
#   docker run -d -p 8480:8480 -p 8481:8481 -v switchyard-data:/data \
#     -e SWITCHYARD_ALLOWED_HOSTS=switchyard.example.com switchyard
# With Redis (team mode): deploy/compose.yaml. How to run it, and the security notes: README.md,
# "Run a team server".

ARG NODE_IMAGE=node:20-bookworm-slim

# Compilers for better-sqlite3, used only when no prebuilt binary fits the platform.
FROM ${NODE_IMAGE} AS toolchain
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./

# The production dependencies alone: no Electron, no build tools, no test agents.
FROM toolchain AS deps
RUN npm ci --omit=dev --no-audit --no-fund

# The build (out/main and the dashboard in out/renderer). Electron is a devDependency the build
# reads its version from; its binary is never needed, so it is not downloaded.
FROM toolchain AS build
ENV ELECTRON_SKIP_BINARY_DOWNLOAD=1
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
# Listens on every interface of the container; SWITCHYARD_ALLOWED_HOSTS (or SWITCHYARD_PUBLIC_URL)
# must name the host names clients use, or it refuses to start. MALLOC_ARENA_MAX and the V8 flag
# in ENTRYPOINT are scripts/runtimeTuning.mjs, as `npm run serve` applies them.
ENV NODE_ENV=production \
    SWITCHYARD_DATA_DIR=/data \
    SWITCHYARD_HOST=0.0.0.0 \
    SWITCHYARD_PORT=8481 \
    SWITCHYARD_PROXY_PORT=8480 \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/out ./out
# The data dir (settings, connections with encrypted secrets, the keys, the request log) is private.
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME ["/data"]
EXPOSE 8480 8481
# The proxy's /health answers without a key; loopback always passes the Host check.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.SWITCHYARD_PROXY_PORT||8480)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "--max-semi-space-size=8", "out/main/serve.js"]
# Options go after the image name (e.g. --proxy-url https://llm.example.com); none by default.
CMD []
