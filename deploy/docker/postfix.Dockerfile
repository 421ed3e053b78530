# Postfix in front of pbmserv, configured from deploy/postfix (the recipe
# tests/test_postfix.py runs): the relay way in, to the compose service
# `pbmserv` on port 2525, and pbmserv's replies out. Built by compose.yaml.
FROM debian:bookworm-slim
# "No configuration": the package writes no main.cf of its own
RUN echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections \
    && apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postfix \
    && rm -rf /var/lib/apt/lists/*
COPY deploy/postfix/ /usr/local/share/pbmserv-postfix/
RUN cd /etc/postfix \
    && cp /usr/share/postfix/master.cf.dist master.cf \
    && { echo "compatibility_level = 3.6"; echo "maillog_file = /dev/stdout"; \
         cat /usr/local/share/pbmserv-postfix/main.cf; } > main.cf \
    && postconf -e "myhostname = mx.example.test" "mydestination =" "inet_protocols = ipv4" \
        "smtp_host_lookup = native" "mynetworks = 127.0.0.0/8 172.30.25.0/24" \
    && postconf -F '*/*/chroot = n' \
    && cp /usr/local/share/pbmserv-postfix/recipients pbmserv_recipients \
    && sed 's/\[127\.0\.0\.1\]:2525/[pbmserv]:2525/' /usr/local/share/pbmserv-postfix/transport.serve > pbmserv_transport \
    && postmap pbmserv_recipients pbmserv_transport \
    && postfix check
EXPOSE 25
CMD ["postfix", "start-fg"]
