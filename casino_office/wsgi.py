import os

from django.core.wsgi import get_wsgi_application
from django.urls import reverse

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino_office.settings")

application = get_wsgi_application()

# Load the URLconf, with every view it imports, as the worker starts, not in its first request: a worker that
# starts under load (a deploy, gunicorn recycling it after max_requests) would otherwise hold its first request
# for about half a second of imports while the machines' requests queue behind it.
reverse("health")
