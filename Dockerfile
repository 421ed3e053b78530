# pbmserv: `pbmserv serve` (the SMTP listener, with its worker and delivery processes).
# docker build -t pbmserv . && docker run -p 2525:2525 -v pbmserv-data:/data pbmserv
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PBMSERV_DATABASE_URL=sqlite:////data/pbmserv.db \
    PBMSERV_MAILDIR=/data/outbox \
    PBMSERV_LISTEN=0.0.0.0:2525

RUN useradd --system --create-home --home-dir /home/pbmserv pbmserv \
    && mkdir /data && chown pbmserv /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY pbmserv ./pbmserv
COPY games ./games
COPY migrations ./migrations
# editable, so the migrations/ folder beside the package stays where Alembic looks for it
RUN pip install --no-cache-dir -e .

USER pbmserv
VOLUME /data
EXPOSE 2525
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
    CMD python -c "import smtplib; s = smtplib.SMTP('127.0.0.1', 2525, timeout=4); assert s.noop()[0] == 250; s.quit()"
CMD ["pbmserv", "serve"]
