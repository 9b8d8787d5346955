"""Keep the Lithuanian and English texts complete.

    manage.py translations            extract every marked text into locale/*/django.po and compile the .mo
    manage.py translations --check    fail (exit 1, one line) if a marked text has no translation, a
                                      translation is fuzzy or obsolete, or a .mo differs from its .po

The check extracts into a copy of the source tree, so it never touches the
working files; the suite runs it (tests/cashdesk/test_i18n.py).
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import polib
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

LANGUAGES = [code for code, _name in settings.LANGUAGES]
# The project's own apps (every one with texts), the settings package, project templates and catalogs.
SOURCE_DIRS = [
    *(app for app in settings.INSTALLED_APPS if "." not in app and (Path(settings.BASE_DIR) / app).is_dir()),
    "templates",
    "locale",
]
MAKEMESSAGES = ["makemessages", "--no-location", "--no-obsolete", *(f"--locale={code}" for code in LANGUAGES)]
SOURCE_LANGUAGE = "en"
IGNORED = [".venv", "var", "bench", "tests", "node_modules"]


def po_path(root: Path, language: str) -> Path:
    return root / "locale" / language / "LC_MESSAGES" / "django.po"


def extract(root: Path) -> None:
    """Run makemessages in `root` (a project tree) with the project's fixed options."""
    args = [sys.executable, "manage.py", *MAKEMESSAGES, *(f"--ignore={name}" for name in IGNORED)]
    env = {**os.environ, "CASINO_DEMO": "1", "DJANGO_SETTINGS_MODULE": "casino_office.settings"}
    env.pop("LANGUAGE_CODE", None)
    result = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, check=False)  # noqa: S603
    if result.returncode != 0:
        raise CommandError(f"makemessages failed: {result.stderr.strip().splitlines()[-1:]}")


def copy_sources(root: Path, target: Path) -> None:
    """The files makemessages reads (and the catalogs), copied into `target`."""
    shutil.copy2(root / "manage.py", target / "manage.py")
    for name in SOURCE_DIRS:
        if (root / name).exists():
            shutil.copytree(root / name, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def problems(root: Path) -> list[str]:
    """What is wrong with the catalogs under `root`, compared with a fresh extraction of its sources."""
    found: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "project"
        copy.mkdir()
        copy_sources(root, copy)
        extract(copy)
        for language in LANGUAGES:
            fresh = {entry.msgid for entry in polib.pofile(str(po_path(copy, language)))}
            committed = polib.pofile(str(po_path(root, language)))
            kept = {entry.msgid: entry for entry in committed if not entry.obsolete}
            for msgid in sorted(fresh - kept.keys()):
                found.append(f"{language}: no entry for {msgid!r}")
            for msgid in sorted(kept.keys() - fresh):
                found.append(f"{language}: obsolete entry {msgid!r}")
            for msgid, entry in kept.items():
                if "fuzzy" in entry.flags:
                    found.append(f"{language}: fuzzy {msgid!r}")
                elif entry.msgid_plural and not all(entry.msgstr_plural.values()):
                    found.append(f"{language}: untranslated plural {msgid!r}")
                elif not entry.msgid_plural and not entry.msgstr:
                    found.append(f"{language}: untranslated {msgid!r}")
            mo = po_path(root, language).with_suffix(".mo")
            if not mo.exists():
                found.append(f"{language}: {mo.name} missing: run manage.py translations")
            else:
                compiled = {(e.msgid, e.msgstr) for e in polib.mofile(str(mo)) if not e.msgid_plural}
                source = {(e.msgid, e.msgstr) for e in kept.values() if not e.msgid_plural and e.msgstr}
                if source - compiled:
                    found.append(f"{language}: {mo.name} is out of date: run manage.py translations")
    return found


class Command(BaseCommand):
    help = "Extract and compile the translations, or check that they are complete (--check)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", action="store_true", help="Only check; exit 1 if anything is missing.")
        parser.add_argument("--root", default=str(settings.BASE_DIR), help="Project tree (default: this one).")

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(options["root"])
        if options["check"]:
            found = problems(root)
            if found:
                raise CommandError(f"{len(found)} translation problem(s): " + "; ".join(found[:10]))
            self.stdout.write(f"translations complete: {', '.join(LANGUAGES)}")
            return
        extract(root)
        for language in LANGUAGES:
            path = po_path(root, language)
            catalog = polib.pofile(str(path))
            if language == SOURCE_LANGUAGE:  # the texts are written in English: its catalog is the identity
                for entry in catalog:
                    if "fuzzy" in entry.flags:  # makemessages' guess from a similar text; the text itself is right
                        entry.flags.remove("fuzzy")
                    entry.previous_msgid = entry.previous_msgid_plural = None
                    if entry.msgid_plural:
                        entry.msgstr_plural = {0: entry.msgid, 1: entry.msgid_plural}
                    else:
                        entry.msgstr = entry.msgid
                catalog.save()
            catalog.save_as_mofile(str(path.with_suffix(".mo")))
        self.stdout.write("extracted and compiled; translate any new empty entries in locale/lt, then run --check")
