"""A validation number is accepted only as the contract writes it, and no spelling of one reaches a log whole.

Issue 21: `GET /api/v1/tickets/72--0021--8853--3114--1239` answered 200 and was logged as it was; so were
`%20%20`, `%20-` and `-%20` separators and percent-encoded digits. A number in a path or a body is accepted as
the bare 18 digits, the printed grouping (`68-9213-7659-0613-9863`, `validation_display`) or that grouping with
single spaces; any other spelling is no number of the contract: `404 not_found` in a path (never found, no
lookup), `422 invalid_number` in a body. The logs mask every spelling, on the decoded path.
"""

import datetime as dt
import importlib.util
import logging
import types
import unicodedata
from typing import Any
from urllib.parse import quote, unquote

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from casino_office.logmask import MaskingFormatter, mask
from tests.api.test_offline_validation import pool, report
from tests.reliability.processes import ROOT
from tickets.models import LookupFailure, MachineRequest, Ticket, TicketEvent
from tickets.numbers import display_validation_number

VILNIUS = dt.timezone(dt.timedelta(hours=2))


def _spellings(number: str) -> list[str]:
    """Fifty ways to write the number that the contract does not print, as they go into a URL's path."""
    g = display_validation_number(number).split("-")
    digits_escaped = "".join(f"%{ord(d):02X}" for d in number)
    spellings = [
        "--".join(g),
        "%20%20".join(g),
        "%20-".join(g),
        "-%20".join(g),
        "%20-%20".join(g),
        "---".join(g),
        "%09".join(g),
        "+".join(g),
        "_".join(g),
        ".".join(g),
        ",".join(g),
        ":".join(g),
        "%2D".join(g),
        "%2d".join(g),
        "%5F".join(g),
        "%2520".join(g),
        digits_escaped,
        "%" + f"{ord(number[0]):02X}" + number[1:],
        number[:9] + f"%{ord(number[9]):02X}" + number[10:],
        number + "%0A",
        number + "%0D%0A",
        number + "%20",
        "%20" + number,
        "-" + number,
        number + "-",
        number + "%09",
        number + "%0B",
        number + "%0C",
        "-".join(g) + "%0A",
        "%20".join(g) + "%20",
        "-" + "-".join(g),
        "-".join(g) + "-",
        "-".join([number[i : i + 4] for i in range(0, 16, 4)] + [number[16:]]),
        "-".join([number[i : i + 3] for i in range(0, 18, 3)]),
        "-".join([number[i : i + 6] for i in range(0, 18, 6)]),
        "%20".join([number[i : i + 6] for i in range(0, 18, 6)]),
        number[:2] + "-" + number[2:],
        "-".join(g[:3]) + g[3] + g[4],
        "%20".join(g[:2]) + "-" + "-".join(g[2:]),
        "-".join(g[:2]) + "%20" + "%20".join(g[2:]),
        quote("".join(chr(0xFF10 + int(d)) for d in number)),  # fullwidth digits
        quote("".join(chr(0x0660 + int(d)) for d in number)),  # Arabic-Indic digits
        quote(number[:17] + "\u00a0" + number[17:]),  # a no-break space
        quote("\u2013".join(g)),  # en dashes
        quote("\u2212".join(g)),  # minus signs
        "0" + number,
        number[1:],
        number + number,
        "%2B".join(g),
        "%20%09".join(g),
    ]
    assert len(spellings) == len(set(spellings)) == 50
    return spellings


@pytest.fixture
def ticket(api, casino) -> str:
    casino.lookup_failure_limit = 1000  # fifty spellings, four times over, are not yet a guessing machine
    casino.save()
    return api.issued_ticket()


def test_the_contracts_spellings_are_found(api, ticket):
    for spelled in (ticket, display_validation_number(ticket), display_validation_number(ticket).replace("-", "%20")):
        response = api.get(f"tickets/{spelled}")
        assert response.status_code == 200, spelled
        assert response.json()["validation_number"] == ticket


def test_a_wrong_check_digit_in_a_contract_spelling_is_still_invalid_number(api, ticket):
    wrong = ticket[:-1] + str((int(ticket[-1]) + 1) % 10)
    for spelled in (wrong, display_validation_number(wrong), display_validation_number(wrong).replace("-", "%20")):
        response = api.get(f"tickets/{spelled}")
        assert (response.status_code, response.json()["code"]) == (422, "invalid_number")


def _raw_uri(path: str) -> dict[str, str]:
    """What gunicorn passes on: the URI as the machine sent it, escapes and all."""
    return {"RAW_URI": f"/api/v1/{path}"}


def test_every_other_spelling_is_not_found_without_a_lookup(api, ticket, make_api):
    player = make_api(asset_number="2002")
    events, remembered = TicketEvent.objects.count(), MachineRequest.objects.count()
    for spelled in _spellings(ticket):
        for client, method, path in (
            (api, "get", f"tickets/{spelled}"),
            (player, "post", f"tickets/{spelled}/authorize"),
            (api, "post", f"tickets/{spelled}/printed"),
            (player, "post", f"tickets/{spelled}/commit"),
        ):
            body = {"request_id": client.next_id(), "result": "printed" if "printed" in path else "accepted"}
            with CaptureQueriesContext(connection) as queries:
                if method == "get":
                    response = client.client.get(f"/api/v1/{path}", **_raw_uri(path))
                else:
                    response = client.client.post(
                        f"/api/v1/{path}", body, content_type="application/json", **_raw_uri(path)
                    )
            assert (response.status_code, response.json()["code"]) == (404, "not_found"), (path, response.content)
            looked_up = [q["sql"] for q in queries.captured_queries if '"tickets_ticket"' in (q["sql"] or "")]
            assert not looked_up, (path, looked_up)
    assert Ticket.objects.get(validation_number=ticket).state == "issued"
    assert TicketEvent.objects.count() == events  # no refusal recorded against the ticket: it was not found
    assert MachineRequest.objects.count() == remembered  # an input error: a corrected retry is no reuse
    assert LookupFailure.objects.filter(code="not_found").count() == 200  # each counts as a guess


@time_machine.travel(dt.datetime(2026, 12, 2, 18, 10, tzinfo=VILNIUS), tick=False)
def test_a_body_number_follows_the_same_rule(api, casino):
    numbers = pool(api, 3)
    contract = {
        numbers[0],
        display_validation_number(numbers[0]),
        display_validation_number(numbers[0]).replace("-", " "),
    }
    written = {unquote(spelled) for spelled in _spellings(numbers[0])} - contract  # as a body holds them
    assert len(written) >= 40
    for spelled in sorted(written):
        response = report(api, spelled)
        assert (response.status_code, response.json()["code"]) == (422, "invalid_number"), spelled
    assert report(api, display_validation_number(numbers[1])).status_code == 201
    assert report(api, display_validation_number(numbers[2]).replace("-", " ")).status_code == 201


def _digits(text: str) -> str:
    """Every digit of the text, whatever its script, as ASCII."""
    return "".join(str(unicodedata.decimal(char)) for char in text if unicodedata.decimal(char, None) is not None)


def _readable(line: str) -> str:
    """The line as a person reads it: percent-escapes (twice over) and Django's backslash escapes decoded."""
    decoded = unquote(unquote(line))
    return decoded.encode("ascii", "backslashreplace").decode("unicode_escape", "replace")


def _leaks(number: str, text: str) -> bool:
    """The number's first fourteen digits readable in the line, with anything between them."""
    return number[:-4] in _digits(_readable(text))


def _gunicorn_logger(tmp_path: Any) -> Any:
    from gunicorn.config import Config

    spec = importlib.util.spec_from_file_location("gunicorn_conf", ROOT / "deploy" / "gunicorn.conf.py")
    shipped = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(shipped)  # type: ignore[union-attr]
    config = Config()
    for name in ("access_log_format", "logger_class"):
        config.set(name, getattr(shipped, name))
    config.set("accesslog", str(tmp_path / "access.log"))
    config.set("errorlog", str(tmp_path / "error.log"))
    return config.logger_class(config)


def test_no_spelling_reaches_a_log_whole(api, ticket, tmp_path, caplog):
    grouped = display_validation_number(ticket)
    spellings = [*_spellings(ticket), ticket, grouped, grouped.replace("-", "%20")]
    access = _gunicorn_logger(tmp_path)
    with caplog.at_level(logging.INFO, logger="django.request"):
        for spelled in spellings:
            path = f"/api/v1/tickets/{spelled}/authorize"
            response = api.client.post(
                path, {"request_id": api.next_id()}, content_type="application/json", RAW_URI=path
            )
            environ = {
                "REQUEST_METHOD": "POST",
                "RAW_URI": path,
                "PATH_INFO": unquote(path),
                "QUERY_STRING": "",
                "SERVER_PROTOCOL": "HTTP/1.1",
                "REMOTE_ADDR": "10.0.0.1",
            }
            sent = types.SimpleNamespace(status=f"{response.status_code} X", sent=80, headers=[])
            access.access(sent, types.SimpleNamespace(headers=[]), environ, dt.timedelta(milliseconds=3))
            access.error("Error handling request %s", path)  # gunicorn names the URI as sent
    for handler in [*access.access_log.handlers, *access.error_log.handlers]:
        handler.flush()
    formatter = MaskingFormatter("%(levelname)s %(name)s %(message)s")
    lines = [formatter.format(record) for record in caplog.records]
    lines += (tmp_path / "access.log").read_text().splitlines() + (tmp_path / "error.log").read_text().splitlines()
    assert len(lines) >= 3 * len(spellings) - 3, len(lines)  # the three the contract writes are no 404
    leaked = [line for line in lines if _leaks(ticket, line)]
    assert not leaked, leaked[:5]
    shown = sum(ticket[-4:] in _digits(_readable(line)) for line in lines)
    assert shown >= 3 * len(spellings) - 3  # masked, not dropped


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("72--0021--8853--3114--1239", "**--****--****--****--1239"),
        ("72%20%200021%20%208853", "**%20%20****%20%208853"),
        ("72%20-0021", "**%20-0021"),
        ("72-%200021", "**-%200021"),
        ("%37%32%30%30%32%31", "**0021"),  # percent-encoded digits are read decoded
        ("72_0021_8853", "**_****_8853"),
        ("72 - 0021 - 8853", "** - **** - 8853"),
        ("72\u20130021\u20138853", "**\u2013****\u20138853"),  # en dashes
        ("%EF%BC%97%EF%BC%92%200021%208853", "**%20****%208853"),  # fullwidth digits, escaped
    ],
)
def test_the_masking_reads_runs_of_separators_and_encoded_digits(text, masked):
    assert mask(text) == masked
