"""The README's curl session runs as written against the demo data and prints the statuses the README shows."""

import re
import subprocess

import pytest
from django.core.management import call_command

from tests.reliability.processes import ROOT

README = ROOT / "README.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _session() -> tuple[str, str]:
    """The curl script and the transcript shown after it."""
    script = next(block for block in _blocks("sh") if "api() {" in block)
    transcript = next(block for block in _blocks("text") if block.startswith('{"validation_number"'))
    return script, transcript


def _statuses(text: str) -> list[str]:
    return re.findall(r"^HTTP (\d{3})$", text, flags=re.M)


def _codes(text: str) -> list[str]:
    return re.findall(r'"(?:state|code)":"([a-z_]+)"', text)


def test_the_transcript_shows_every_answer_with_its_status():
    script, transcript = _session()
    answers = [line for line in transcript.splitlines() if line.startswith("{")]
    assert len(answers) == len(_statuses(transcript)) == script.count("\napi ") + script.count("$(api ") == 7


def _run(script: str, api: str) -> str:
    assert "API=http://127.0.0.1:8000/api/v1\n" in script
    result = subprocess.run(
        ["bash", "-e", "-c", script.replace("API=http://127.0.0.1:8000/api/v1", f"API={api}", 1)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _numbers(text: str) -> set[str]:
    return set(re.findall(r'"validation_number":"(\d+)"', text))


@pytest.mark.django_db(transaction=True)
def test_the_readme_curl_session_answers_as_the_readme_shows(live_server, settings):
    settings.ALLOWED_HOSTS = ["*"]
    settings.DEMO = True  # seed_demo refuses otherwise; the keys it sets are the ones the README uses
    call_command("seed_demo", verbosity=0)
    script, transcript = _session()
    api = f"{live_server.url}/api/v1"
    first, second = _run(script, api), _run(script, api)
    for output in (first, second):
        assert _statuses(output) == _statuses(transcript) == ["201", "200", "200", "200", "200", "409", "200"]
        assert _codes(output) == _codes(transcript)
        answers = [line for line in output.splitlines() if line.startswith("{")]
        assert answers[3] == answers[6], "the replayed commit answers byte for byte"
    # Issue 21: run again, the session's request ids repeated and it replayed the first run's ticket.
    assert len(_numbers(first)) == len(_numbers(second)) == 1
    assert _numbers(first) != _numbers(second), "a second run works a new ticket"
