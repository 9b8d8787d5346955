"""docs/operations.md: every command in a `console` block is one the suite or a script runs."""

import os
import re
import shlex
import subprocess
from pathlib import Path

from tests.reliability.processes import ROOT

GUIDE = ROOT / "docs" / "operations.md"
# Where commands are really run from: the tests, the scripts, the Makefile and CI.
RUNNERS = [
    *(path for path in ROOT.glob("tests/**/*.py") if path.name != "test_guide.py"),
    *ROOT.glob("scripts/*"),
    ROOT / "Makefile",
    ROOT / ".ci" / "run",
]
_PUNCTUATION = re.compile(r"""[\[\]"',()$]""")


def _normal(text: str) -> str:
    """Python's ["manage.py", "migrate"] and the shell's manage.py migrate read alike."""
    return " ".join(_PUNCTUATION.sub(" ", text).split())


def guide_commands() -> list[str]:
    commands, inside = [], False
    for line in GUIDE.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            inside = stripped == "```console"
            continue
        if inside and stripped.startswith("$ "):
            commands.append(stripped[2:])
    return commands


def section_commands(heading: str) -> list[str]:
    """The commands of the guide's section (or subsection) whose heading is `heading`, in order."""
    commands, fence, current = [], "", ""
    for line in GUIDE.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = "" if fence else stripped
            continue
        if not fence and stripped.startswith("#"):
            current = stripped.lstrip("#").strip()
        elif fence == "```console" and stripped.startswith("$ ") and current == heading:
            commands.append(stripped[2:])
    assert commands, f"no commands under {heading!r}"
    return commands


def key(command: str) -> list[str]:
    """What must appear where the command is run: the program and what it is asked to do."""
    tokens = shlex.split(command)
    while tokens and re.fullmatch(r"[A-Z_]+=.*", tokens[0]):  # VAR=value prefixes
        tokens.pop(0)
    program = Path(tokens[0]).name if not tokens[0].startswith("scripts/") else tokens[0]
    rest = tokens[1:]
    if program.startswith("python"):
        if rest[0] == "-c":
            return [_normal(rest[1])]
        if rest[0] == "-m":
            return [f"-m {rest[1]}"]
        if rest[0] == "manage.py":  # run as manage.py <command>, or call_command("<command>") in a test
            return [f"manage.py {rest[1]}", f"call_command {rest[1]}"]
    if program.startswith("scripts/"):
        return [program]
    # The program, its subcommand if it has one (openssl req), and the first flag.
    first_flag = next((at for at, token in enumerate(rest) if token.startswith("-")), None)
    return [" ".join([program, *(rest[: first_flag + 1] if first_flag is not None else [])])]


def test_the_guide_has_commands_and_each_is_run_by_the_suite_or_a_script():
    commands = guide_commands()
    assert len(commands) >= 12, commands  # the check below is not vacuous
    sources = _normal(" ".join(path.read_text(errors="replace") for path in RUNNERS if path.is_file()))
    missing = [command for command in commands if not any(_normal(k) in sources for k in key(command))]
    assert not missing, missing


def test_the_check_would_notice_a_command_nobody_runs():
    sources = _normal(" ".join(path.read_text(errors="replace") for path in RUNNERS if path.is_file()))
    assert not any(_normal(k) in sources for k in key(".venv/bin/python manage.py flush --noinput"))
    assert not any(_normal(k) in sources for k in key("scripts/drop-everything"))


def test_files_the_guide_names_exist():
    text = GUIDE.read_text()
    for path in re.findall(r"`((?:deploy|scripts|docs|bench)/[\w./-]+)`", text):
        assert (ROOT / path).exists(), path


def test_make_test_checks_the_system_packages_first():
    """On a fresh machine the README's `make test` alone is enough: it installs what the suite needs from Debian."""
    outer = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}  # when the suite itself runs under make
    env = {key: value for key, value in os.environ.items() if key not in outer}
    planned = subprocess.run(
        ["make", "--no-print-directory", "-n", "test"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    assert planned.splitlines()[0] == "bash scripts/system-packages"
