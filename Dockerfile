# The game server image: `python -m server` (the entry point of scripts/run) under uvicorn.
# Configure it through the environment (README.md lists every variable): REDIS_URL (shared
# by every replica; without it the server runs its embedded Valkey with its data in
# DATA_DIR, which must then be a volume writable by uid 10001), SERVER_SECRET (every replica
# must share it), WORKERS, LOG_LEVEL, LOG_FORMAT.
#   docker build -t solitaire-server .
#   docker run -e REDIS_URL=redis://redis:6379/0 -e SERVER_SECRET=... -p 8000:8000 solitaire-server
# The TypeScript SDK (clients/ts), which the web client is built on: installed from its lock
# file and built (tsc, and its browser build) in a throwaway stage.
FROM node:20-slim AS sdk
WORKDIR /ts
COPY clients/ts/package.json clients/ts/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY clients/ts/tsconfig.json ./
COPY clients/ts/src/ src/
COPY clients/ts/scripts/ scripts/
RUN npm run build

FROM python:3.11-slim

# jemalloc: the server's allocator (--allocator auto takes it), which gives the memory of
# closed sockets back to the OS.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libjemalloc2 \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# A fixed, numeric non-root uid/gid so orchestrators (runAsNonRoot) can verify it.
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --no-create-home --shell /usr/sbin/nologin app

# Install the project (not editable, no dev extras) into the image's site-packages; the
# sources stay root-owned and read-only for the server's user.
WORKDIR /src
COPY pyproject.toml README.md ./
COPY server/ server/
COPY protocol/ protocol/
COPY clients/ clients/
COPY tools/ tools/
RUN pip install --no-cache-dir . \
    && rm -rf build *.egg-info

# The web client, served at / (the server finds it through WEB_ROOT), and the SDK's browser
# build beside it, where the server looks for it (WEB_ROOT/../ts/dist/browser).
COPY clients/web/index.html /srv/web/
COPY clients/web/static/ /srv/web/static/
COPY --from=sdk /ts/dist/browser/ /srv/ts/dist/browser/
ENV WEB_ROOT=/srv/web

# Run from an empty directory so `python -m server` imports the installed package.
WORKDIR /app
USER 10001:10001

EXPOSE 8000

# slim has no curl: probe the liveness endpoint with the standard library.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status == 200 else 1)"]

CMD ["python", "-m", "server", "--host", "0.0.0.0", "--port", "8000"]
