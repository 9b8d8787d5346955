#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino_office.settings")
    try:
        from django.core.exceptions import ImproperlyConfigured
        from django.core.management import execute_from_command_line
    except ImportError:
        sys.exit("Django is not installed for this Python: run `make install`, then `.venv/bin/python manage.py ...`")
    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:  # a setting missing or wrong: one line naming it, no traceback
        sys.exit(f"configuration error: {error}")


if __name__ == "__main__":
    main()
