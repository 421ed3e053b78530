# pbmserv: `pbmserv serve` (the SMTP listener, with its worker and delivery processes).
# docker build -t pbmserv .
# docker run -p 127.0.0.1:2525:2525 -v pbmserv-data:/data -v pbmserv-key:/key -e PBMSERV_RELAY=host:port pbmserv
# The install is .ci/smoke-install's, which CI runs: the wheel built with
# `pip wheel --no-deps`, then installed with pip (no editable install).
FROM python:3.11-slim AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY pbmserv ./pbmserv
COPY games ./games
COPY migrations ./migrations
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheel .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PBMSERV_DATABASE_URL=sqlite:////data/pbmserv.db \
    PBMSERV_KEY_FILE=/key/pbmserv.key \
    PBMSERV_MAIL_BACKEND=smtp \
    PBMSERV_MAILDIR=/data/outbox \
    PBMSERV_LISTEN=0.0.0.0:2525 \
    PBMSERV_WEB_LISTEN=0.0.0.0:8080

# sqlite3 for backups: sqlite3 /data/pbmserv.db ".backup /data/backup.db"
RUN apt-get update && apt-get install -y --no-install-recommends sqlite3 && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 999 pbmserv \
    && useradd --system --uid 999 --gid 999 --home-dir /data --no-create-home pbmserv \
    && mkdir /data /key && chown pbmserv:pbmserv /data /key && chmod 700 /key
COPY --from=wheel /wheel /wheel
RUN pip install --no-cache-dir /wheel/pbmserv-*.whl && rm -rf /wheel
COPY deploy/docker/entrypoint /usr/local/bin/pbmserv-entrypoint

USER pbmserv
WORKDIR /data
# the key in a volume of its own: backups of /data never carry it
VOLUME /data /key
EXPOSE 2525 8080
# asks the listener the settings name (PBMSERV_LISTEN, or the config file's)
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s CMD ["pbmserv", "health"]
ENTRYPOINT ["pbmserv-entrypoint"]
CMD ["pbmserv", "serve"]
