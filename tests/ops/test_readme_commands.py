"""The README's management commands as a new user types them against the demo (issue 21): with CASINO_DEMO=1."""

import os
import re
import subprocess
import sys

import pytest

from tests.reliability.processes import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DEMO_COMMANDS = ["kiosk_cash", "machine_key", "second_factor_reset"]
DEMO_PREFIX = "CASINO_DEMO=1 .venv/bin/python manage.py "


@pytest.mark.parametrize("command", DEMO_COMMANDS)
def test_every_mention_of_a_demo_command_says_casino_demo(command):
    """The README said `manage.py kiosk_cash`; run so, against the demo it stops at "SECRET_KEY is required"."""
    mentions = [match.start() for match in re.finditer(rf"manage\.py {command}\b", README)]
    assert mentions, command
    for start in mentions:
        assert README[: start + len("manage.py ")].endswith(DEMO_PREFIX), README[start - 40 : start + 40]


def _run(command: str, demo: bool) -> subprocess.CompletedProcess[str]:
    """The command in a bare environment, as a new user's shell has it (no test settings or secrets)."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(ROOT))}
    if demo:
        env["CASINO_DEMO"] = "1"
    return subprocess.run(
        [sys.executable, "manage.py", command, "--help"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("command", DEMO_COMMANDS)
def test_the_commands_need_casino_demo_against_the_demo(command):
    refused = _run(command, demo=False)
    assert refused.returncode != 0
    assert "SECRET_KEY is required (or set CASINO_DEMO=1 for the demo)" in refused.stderr
    helped = _run(command, demo=True)
    assert helped.returncode == 0, helped.stderr


def test_the_readme_says_the_compliance_pages_are_empty_until_a_transaction_over_the_threshold():
    assert "the register is empty" in README
    assert "1 500 EUR" in README
