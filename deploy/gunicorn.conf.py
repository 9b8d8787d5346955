"""gunicorn settings for the web nodes (docs/operations.md). The test suite starts gunicorn with this file.

Every value can be set from the environment, so the same file serves every node.
"""

import multiprocessing
import os
import re
import sys
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from gunicorn.glogging import Logger, SafeAtoms

from casino_office.logmask import MaskingFormatter, mask

# The settings are read here, in the master, before any worker starts: a setting missing or wrong stops
# gunicorn with one line naming it (as manage.py does), not a worker's traceback and "Worker failed to boot".
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino_office.settings")
try:
    from django.conf import settings

    settings.INSTALLED_APPS  # noqa: B018 (reading one setting loads them all)
except ImproperlyConfigured as error:
    sys.exit(f"configuration error: {error}")

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
# Sync workers: each request holds one database connection for its few milliseconds.
workers = int(os.environ.get("GUNICORN_WORKERS", str(multiprocessing.cpu_count() * 2 + 1)))
worker_class = "sync"
# A machine's request that takes longer than this has failed; it will retry with the same request_id.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = 5
# Recycle workers now and then (bounded memory), staggered so they do not restart together. Not too often: with
# two workers at the benchmark's peak a worker serves 150-200 machine requests a second, and a new one boots
# (about 0.6 s of CPU) and prepares its statements again (5 000 was a restart every 30 s per worker).
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "50000"))
max_requests_jitter = 5000
# nginx on the same host sets X-Forwarded-Proto; trust it only from there.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None  # empty: no access log
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
# Validation numbers are in the machine API's URLs and a URL may carry any number: the request line is
# logged masked (MaskedLogger). Never the Authorization header. The last field is nginx's request id, the
# same as in nginx's access log (deploy/nginx/casino-office.conf).
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms %({x-request-id}i)s'

# Atoms that are numbers, times or addresses, never the request's text: left as they are.
_PLAIN_ATOMS = frozenset({"h", "l", "t", "s", "m", "H", "b", "B", "T", "D", "M", "L", "p"})
_NGINX_REQUEST_ID = re.compile(r"[0-9a-f]{32}")


class _MaskedAtoms(SafeAtoms):
    def __getitem__(self, key: str) -> Any:
        value = super().__getitem__(key)
        if key in _PLAIN_ATOMS or not isinstance(value, str):
            return value
        if key.lower() == "{x-request-id}i" and _NGINX_REQUEST_ID.fullmatch(value):
            return value
        return mask(value)


class MaskedLogger(Logger):
    """gunicorn's logs without a full ticket, receipt or document number or a personal code
    (casino_office/logmask.py): the access log masks the request's parts (request line, path, query, referer,
    headers) and every message of the error log is masked."""

    atoms_wrapper_class = _MaskedAtoms

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        # The access line is masked atom by atom above (a status and a size side by side are no number).
        for handler in self.error_log.handlers:
            if handler.formatter is not None:
                handler.setFormatter(MaskingFormatter(handler.formatter._fmt, handler.formatter.datefmt))


logger_class = MaskedLogger
proc_name = "casino-office"
