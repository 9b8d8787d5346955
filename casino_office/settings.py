"""Settings for casino_office, read from the environment.

Production: DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis), SECRET_KEY
and ALLOWED_HOSTS are set, DEBUG is off. Demo/development: CASINO_DEMO=1
allows a built-in SECRET_KEY and the embedded defaults (SQLite file and a
filesystem broker under var/), so a fresh checkout runs with no services.
"""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from casino_office.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("CASINO_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEMO = env_bool("CASINO_DEMO", False)
DEBUG = env_bool("DEBUG", False)

_DEMO_SECRET_KEY = "demo-only-insecure-key-do-not-use-in-production-3f9a1c7e"  # noqa: S105 - demo mode only
if DEMO:
    SECRET_KEY = env_str("SECRET_KEY", _DEMO_SECRET_KEY)
else:
    SECRET_KEY = env_str("SECRET_KEY", "")
    if not SECRET_KEY:
        raise ImproperlyConfigured("SECRET_KEY is required (or set CASINO_DEMO=1 for the demo)")
# Rotating SECRET_KEY (docs/operations.md): the previous keys, newest first, still accepted for what they signed.
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS", [])

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"] if DEMO or DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
CSRF_FAILURE_VIEW = "cashdesk.views.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "csp",
    "pgtrigger",
    # Trigger-written history of the configuration (machines.models.history).
    "pghistory",
    # The shared base: the site's frame template, its static files and the template tags every app uses.
    "casino_office",
    "machines",
    "staff",
    "tickets",
    "cashdesk",
    "compliance",
    "ops",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "casino_office.csp.ContentSecurityPolicyMiddleware",
    "casino_office.middleware.DatabaseUnavailableMiddleware",
    "casino_office.middleware.NulCharacterMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: the staff's own middleware (STAFF_ONLY_MIDDLEWARE, run here in its order); the machine API skips it.
    "staff.middleware.StaffOnlyMiddleware",
]
STAFF_ONLY_MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "staff.middleware.SecondFactorMiddleware",
    "staff.middleware.ConfigActorMiddleware",
    "staff.middleware.StaffLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a refused login into the lockout page
]

ROOT_URLCONF = "casino_office.urls"
WSGI_APPLICATION = "casino_office.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'casino_office.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
    )
}
# Scaling out: reports and the dashboard read from a PostgreSQL read replica when one is named.
REPORTS_DATABASE = "default"
if env_str("REPORTS_DATABASE_URL", ""):
    DATABASES["reports"] = dj_database_url.parse(
        env_str("REPORTS_DATABASE_URL", ""),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
    )
    # A replica that does not answer is given up on quickly: reports then read the primary (casino_office/replica.py).
    DATABASES["reports"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env_int("REPORTS_CONNECT_TIMEOUT", 3, minimum=1)
    )
    DATABASES["reports"]["TEST"] = {"MIRROR": "default"}
    REPORTS_DATABASE = "reports"
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The machine API's hot statements (casino_office.rawsql) run with server-side binding; psycopg prepares each on
    # the connection after this many uses, so PostgreSQL stops parsing and planning them (Django turns this
    # off by default). 0 turns it off, for a transaction-mode PgBouncer older than 1.21 in between.
    _prepare = env_int("DATABASE_PREPARE_THRESHOLD", 5, minimum=0)
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = _prepare or None
# How long a machine read by its key may be kept in a web process's memory (0: read on every request). Kept, it is
# proved current in the transaction of each request that uses it (tickets.api.auth.KeptMachine): a key revoked
# or a rule changed still takes effect on the next request; what is saved is the read before each request.
MACHINE_KEPT_SECONDS = env_int("MACHINE_KEPT_SECONDS", 60, minimum=0)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The demo's SQLite serves the web server, the worker and the beat at once. SQLite serialises writers:
    # wait for the lock (timeout, s) instead of failing; the write-ahead log lets readers go on beside the
    # writer; and a transaction takes the write lock when it begins (IMMEDIATE): two that read and then write
    # would otherwise deadlock, which SQLite answers with "database is locked" at once, whatever the timeout.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20,
        transaction_mode="IMMEDIATE",
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Staff choose their language (a switch in the header, stored per user); the
# casino's default is Lithuanian. The machine API always answers in English.
LANGUAGES = [("lt", "Lietuvių"), ("en", "English")]
LANGUAGE_CODE = env_str("LANGUAGE_CODE", "lt")
if LANGUAGE_CODE not in dict(LANGUAGES):
    raise ImproperlyConfigured(f"LANGUAGE_CODE must be one of {', '.join(dict(LANGUAGES))}, not {LANGUAGE_CODE!r}")
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "Europe/Vilnius")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Production serves hashed files collected by `collectstatic`; the demo and
# the tests serve them straight from the apps.
STATIC_MANIFEST = env_bool("STATIC_MANIFEST", not (DEBUG or DEMO))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Login ----------------------------------------------------------------
# Throttling (django-axes): an account, or an address, with AXES_FAILURE_LIMIT
# failed logins within the cool-off is locked until the cool-off has passed
# since its last failure (a shift supervisor can lift it sooner:
# /supervisor/lockouts/). Both the staff login and the admin's. A good login
# forgets that account's failures only (staff.login.StaffLoginHandler).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "staff.login.StaffLoginHandler"
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # either one locks
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, minimum=3)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 30, minimum=1))
AXES_RESET_ON_SUCCESS = True
# Attempts while locked are refused without counting: the lock ends a cool-off after the limit was
# reached, not a cool-off after the last try (someone still typing would never get in).
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "staff.login.lockout_response"  # 429, in the staff's language
AXES_CLIENT_IP_CALLABLE = "staff.login.client_address"
AXES_USERNAME_CALLABLE = "staff.login.client_username"  # cut to what axes stores: a long name is counted too
AXES_ENABLE_ADMIN = False  # lockouts are lifted on the supervisors' page, or `manage.py axes_reset_username`
# nginx on the same host (deploy/nginx): its X-Forwarded-For is believed, anyone else's is not.
# Keep it the same as gunicorn's forwarded_allow_ips (deploy/gunicorn.conf.py).
TRUSTED_PROXY_IPS = env_list("TRUSTED_PROXY_IPS", ["127.0.0.1", "::1"])
# Second factor (django-otp, TOTP) for the roles in staff.roles.SECOND_FACTOR_ROLES and the admin;
# each wrong code doubles the wait before the next one (django-otp's throttling).
OTP_TOTP_ISSUER = env_str("OTP_TOTP_ISSUER", "Casino Office")
OTP_TOTP_THROTTLE_FACTOR = 1
OTP_ADMIN_HIDE_SENSITIVE_DATA = True  # the admin never shows a device's key or QR code

# --- Security -------------------------------------------------------------
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not (DEBUG or DEMO))
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG or DEMO else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = not (DEBUG or DEMO)
CSRF_COOKIE_SECURE = not (DEBUG or DEMO)
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 12 * 3600, minimum=60)
X_FRAME_OPTIONS = "DENY"
# HSTS preload lists public domains; the back office runs on the casino's
# closed network under an internal name, so there is nothing to preload.
# The admin's, django-axes's and Django's CSRF checks look for their middleware in MIDDLEWARE only; it is in
# STAFF_ONLY_MIDDLEWARE, which staff.middleware.check_staff_only_middleware checks in their place (and
# check_staff_csrf_cookie_secure asks Django's security.W016 with it in view).
SILENCED_SYSTEM_CHECKS = [
    *env_list("SILENCED_SYSTEM_CHECKS", ["security.W021"]),
    *("admin.E408", "admin.E409", "admin.E410", "axes.W002", "security.W003"),
]

# --- Content-Security-Policy ---------------------------------------------
# Everything from the office itself, nothing inline (no <script> or <style>
# blocks, no style= or on*= attributes: tests/reliability/test_csp.py) and
# no outside origin. The transaction page frames the receipt PDF (same
# origin); the PDFs alone may be framed (casino_office/csp.py). ReDoc's page
# also allows its run-time style elements by nonce and hash (tickets/api/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "frame-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# --- Personal data --------------------------------------------------------
# Fernet keys for personal codes and document numbers, newest first (rotation:
# add a new key in front, run `manage.py rotate_pii_keys`, then drop the old
# one); and the HMAC key of the blind index used to search them.
_DEMO_PII_KEY = "ZGVtby1vbmx5LXBpaS1rZXktbm90LWZvci1wcm9kISE="
PII_ENCRYPTION_KEYS = env_list("PII_ENCRYPTION_KEYS", [_DEMO_PII_KEY] if DEMO else [])
PII_INDEX_KEY = env_str("PII_INDEX_KEY", "demo-only-blind-index-key" if DEMO else "")
if not PII_ENCRYPTION_KEYS or not PII_INDEX_KEY:
    raise ImproperlyConfigured("PII_ENCRYPTION_KEYS and PII_INDEX_KEY are required (or set CASINO_DEMO=1 for the demo)")

# --- Register -------------------------------------------------------------
# HMAC keys of the register's chain and of its anchors, newest first: the first
# signs, every listed one verifies what it signed (entries record a key id), so
# a retired key stays listed after the new one (docs/operations.md, "The
# register"). The database never holds them. The daily anchors (each casino's
# signed head) go to REGISTER_ANCHOR_DIR, from where they are shipped off-site.
_DEMO_REGISTER_KEY = "demo-only-register-chain-key-not-for-production"
REGISTER_CHAIN_KEYS = env_list("REGISTER_CHAIN_KEYS", [_DEMO_REGISTER_KEY] if DEMO else [])
if not REGISTER_CHAIN_KEYS:
    raise ImproperlyConfigured("REGISTER_CHAIN_KEYS is required (or set CASINO_DEMO=1 for the demo)")
# A short key could be guessed offline from the hashes that anyone reading the database sees.
if any(len(key) < 32 for key in REGISTER_CHAIN_KEYS):
    raise ImproperlyConfigured("each key of REGISTER_CHAIN_KEYS needs at least 32 characters (docs/operations.md)")
REGISTER_ANCHOR_DIR = Path(env_str("REGISTER_ANCHOR_DIR", str(VAR_DIR / "anchors")))
# The books' anchors (every chain's end, signed: machines.anchors) go to the same directory this often. Records
# written after the last anchor and deleted before the next are what no anchor can see: this is that window.
BOOKS_ANCHOR_MINUTES = env_int("BOOKS_ANCHOR_MINUTES", 15, minimum=1)

# --- API -----------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON only, and never nested deeper than a request of the contract (tickets.api.parsers).
    "DEFAULT_PARSER_CLASSES": ["tickets.api.parsers.ContractJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "tickets.api.errors.api_exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Casino ticket system: slot-machine API",
    "DESCRIPTION": "The REST contract between the ticket system and slot machines and kiosks (TITO), v1.1: "
    "v1 with the additions of v1.1 (docs/machine-api.md), served under /api/v1/.",
    "VERSION": "1.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "tickets.api.schema.exact_schema"],
}

# How long a machine's request_id is remembered for replays, and how long
# failed validation-number lookups are kept for fraud review.
IDEMPOTENCY_RETENTION_DAYS = env_int("IDEMPOTENCY_RETENTION_DAYS", 7, minimum=1)
LOOKUP_FAILURE_RETENTION_DAYS = env_int("LOOKUP_FAILURE_RETENTION_DAYS", 90, minimum=1)
# The expiry job commits this many tickets per transaction so that it never
# holds row locks long enough to delay a redemption.
TICKET_EXPIRY_BATCH_SIZE = env_int("TICKET_EXPIRY_BATCH_SIZE", 1000, minimum=1)
# A pause between batches leaves the database to the machines under heavy expiry.
TICKET_EXPIRY_BATCH_PAUSE_MS = env_int("TICKET_EXPIRY_BATCH_PAUSE_MS", 0, minimum=0)

# A stuck redemption is resolved only this many seconds after its hold ran out: a machine retries a commit
# whose answer it lost after at most 10 s (machine-api.md, "Timing"), and a retry must find the ticket held.
STUCK_RESOLUTION_GRACE = env_int("STUCK_RESOLUTION_GRACE", 30, minimum=10)

# bench/api_load.py's bare floor endpoint; never on in production.
BENCH_FLOOR_ENDPOINT = env_bool("BENCH_FLOOR_ENDPOINT", False)

# --- Celery ---------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL == "filesystem://":
    _queue_dir = VAR_DIR / "celery-broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir / "queue"),
        "data_folder_out": str(_queue_dir / "queue"),
        "processed_folder": str(_queue_dir / "processed"),
        "control_folder": str(_queue_dir / "control"),  # kombu's default is ./control, outside var/
        "store_processed": False,
    }
# One queue unless an operator splits the work (docs/operations.md); /health/ watches it.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
HEARTBEAT_SECONDS = env_int("HEARTBEAT_SECONDS", 60, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "expire-due-tickets": {"task": "tickets.expire_due_tickets", "schedule": 60.0},
    "report-stuck-redemptions": {"task": "tickets.report_stuck_redemptions", "schedule": 30.0},
    "purge-idempotency-records": {"task": "tickets.purge_request_records", "schedule": 3600.0},
    "mark-overdue-holds": {"task": "cashdesk.mark_overdue_holds", "schedule": 900.0},
    "snapshot-liability": {"task": "cashdesk.snapshot_liability", "schedule": 3600.0},
    # The finished gaming day's meters against the tickets; hourly, so a late end-of-day reading still counts.
    "reconcile-meters": {"task": "tickets.reconcile_meters", "schedule": 3600.0},
    "pseudonymise-expired-persons": {"task": "compliance.pseudonymise_expired_persons", "schedule": 86400.0},
    # After the night's last gaming day closes and before the anchors are shipped off-site (docs/operations.md).
    "anchor-register": {"task": "compliance.anchor_register", "schedule": crontab(hour=6, minute=30)},
    "anchor-books": {"task": "machines.anchor_books", "schedule": 60.0 * BOOKS_ANCHOR_MINUTES},
    # The books verified each morning, on from where the last run ended and against the anchors written since.
    "verify-books": {"task": "compliance.verify_books_daily", "schedule": crontab(hour=7, minute=0)},
    # Sunday night, every record from each chain's first: a record verified once and edited since is found here.
    "verify-books-full": {
        "task": "compliance.verify_books_daily",
        "schedule": crontab(hour=3, minute=0, day_of_week=0),
        "kwargs": {"full": True},
    },
    "heartbeat": {"task": "ops.heartbeat", "schedule": float(HEARTBEAT_SECONDS)},
}

# --- Health (/health/) ----------------------------------------------------
HEALTH_QUEUES = env_list("HEALTH_QUEUES", [CELERY_TASK_DEFAULT_QUEUE])
HEALTH_MAX_QUEUE_LENGTH = env_int("HEALTH_MAX_QUEUE_LENGTH", 1000, minimum=1)
HEALTH_MAX_HEARTBEAT_AGE = env_int("HEALTH_MAX_HEARTBEAT_AGE", 180, minimum=2)
# The books are verified every morning: a last run older than this (a day and two hours) is reported.
HEALTH_MAX_BOOKS_AGE = env_int("HEALTH_MAX_BOOKS_AGE", 26 * 3600, minimum=3600)
if HEALTH_MAX_HEARTBEAT_AGE <= HEARTBEAT_SECONDS:
    raise ImproperlyConfigured("HEALTH_MAX_HEARTBEAT_AGE must be longer than HEARTBEAT_SECONDS (three times is usual)")
# Reports read the replica (REPORTS_DATABASE_URL): further behind than this, in seconds, the probe fails.
HEALTH_MAX_REPLICA_LAG = env_int("HEALTH_MAX_REPLICA_LAG", 300, minimum=1)
HEALTH_BROKER_TIMEOUT = env_int("HEALTH_BROKER_TIMEOUT", 2, minimum=1)

# --- Logging --------------------------------------------------------------
# No ticket, receipt or document number and no personal code in a log line: every handler masks them
# (casino_office/logmask.py), and a refused request (4xx) is one line, without a traceback. The Celery
# worker logs through this too (casino_office/celery.py); gunicorn masks its own logs (deploy/gunicorn.conf.py).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"one_line_refusals": {"()": "casino_office.logmask.OneLineClientErrors"}},
    "formatters": {
        "plain": {
            "()": "casino_office.logmask.MaskingFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s %(message)s",
        }
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["one_line_refusals"]}},
    # Django's own handlers write unmasked (runserver's request log, the debug console, mails to admins with
    # the request's details): its loggers write through the one above instead.
    "loggers": {
        "django": {"handlers": [], "propagate": True},
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
