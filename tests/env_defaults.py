"""Loaded with `-p` before pytest-django configures Django: the test environment's defaults.

Tests run with production-like settings (DEBUG off) against PostgreSQL;
each default can be overridden from the environment.
"""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/casino_office")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("DEBUG", "0")
