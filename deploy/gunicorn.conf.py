"""gunicorn settings for the web nodes (docs/operations.md). The test suite starts gunicorn with this file.

Every value can be set from the environment, so the same file serves every node.
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
# Sync workers: each request holds one database connection for its few milliseconds.
workers = int(os.environ.get("GUNICORN_WORKERS", str(multiprocessing.cpu_count() * 2 + 1)))
worker_class = "sync"
# A machine's request that takes longer than this has failed; it will retry with the same request_id.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = 5
# Recycle workers now and then (bounded memory), staggered so they do not restart together.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "5000"))
max_requests_jitter = 500
# nginx on the same host sets X-Forwarded-Proto; trust it only from there.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None  # empty: no access log
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
# Ticket numbers are in URLs, never keys or personal data; the Authorization header is not logged.
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'
proc_name = "casino-office"
