import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import reverse

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino_office.settings")

application = get_wsgi_application()

# Load the URLconf, with every view it imports, as the worker starts, not in its first request: a worker that
# starts under load (a deploy, gunicorn recycling it after max_requests) would otherwise hold its first request
# for about half a second of imports while the machines' requests queue behind it.
reverse("health")

# What the worker has loaded now stays for its life: out of the garbage collector's sight (gc.freeze), a full
# collection scans only what requests left behind, not the 150 000 objects of Django and the office. Scanning
# those took 70-120 ms on the benchmark machine, every few thousand requests, a stall each request queued
# behind it waited out (bench/README.md, "The staff's middleware skipped, and the collector kept off what a worker
# loaded").
gc.collect()
gc.freeze()
