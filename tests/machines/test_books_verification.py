"""The books' daily verification (issue 23): it runs itself, walks on from where it ended, checks the anchors
written since, raises a compliance alert on the first broken record, and the health probe reports it."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from compliance.models import Alert
from compliance.tasks import verify_books_daily
from machines.anchors import books_anchor
from machines.models import BooksVerification, ConfigChange
from ops.health import check_books
from tests.machines.test_chains import cut_ticket, tamper
from tickets.models import Ticket

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def anchor_dir(settings, tmp_path):
    settings.REGISTER_ANCHOR_DIR = tmp_path
    return tmp_path


def test_a_day_of_intact_books_is_recorded_and_the_probe_says_so(api, casino):
    api.issued_ticket("7.00")
    assert check_books().detail == "not verified yet"
    assert verify_books_daily() == 0
    run = BooksVerification.objects.get(casino=casino)
    assert run.intact
    assert run.ends["ticket_events"][0] == 2
    assert run.records == 2 + ConfigChange.objects.filter(casino=casino).count()  # the casino's and machine's
    check = check_books()
    assert check.ok
    assert check.data["last"][casino.code]["intact"] is True


def test_the_next_run_walks_on_from_the_last_and_names_a_forged_change(api, casino):
    api.issued_ticket("7.00")
    verify_books_daily()
    later = Ticket.objects.get(validation_number=api.issued_ticket("9.00"))
    tamper("UPDATE tickets_ticket SET amount = %s WHERE id = %s", [Decimal("900.00"), later.pk])
    assert verify_books_daily() == 1
    run = BooksVerification.objects.filter(casino=casino).first()
    assert (
        run.finding
        == f"{casino.code}: ticket_events record 3: its content does not match its MAC (edited, forged or moved)"
    )
    alert = Alert.objects.get(kind=Alert.Kind.BOOKS_BROKEN)
    assert alert.details["finding"] == run.finding
    check = check_books()
    assert not check.ok
    assert check.detail == f"{casino.code}: the books' verification found a broken record"


def test_a_tail_cut_after_it_was_anchored_is_found_by_the_daily_run(api, casino, anchor_dir):
    verify_books_daily()
    ticket = Ticket.objects.get(validation_number=api.issued_ticket("7.00"))
    books_anchor(casino=casino, directory=anchor_dir)
    cut_ticket(ticket)
    assert verify_books_daily() == 1
    assert "ticket_events record 2 is missing" in BooksVerification.objects.filter(casino=casino).first().finding


def test_a_record_verified_before_and_changed_since_is_named(api, casino):
    """The run walks on from the last run's end: that end must still be the record it verified."""
    ticket = Ticket.objects.get(validation_number=api.issued_ticket("7.00"))
    verify_books_daily()
    tamper("DELETE FROM tickets_ticketevent WHERE ticket_id = %s AND kind = 'printed'", [ticket.pk])
    assert verify_books_daily() == 1
    finding = BooksVerification.objects.filter(casino=casino).first().finding
    assert "ticket_events record 2: it changed or went since it was last verified" in finding


def test_a_stale_verification_is_reported(api, casino, settings):
    verify_books_daily()
    BooksVerification.objects.update(started_at=timezone.now() - dt.timedelta(hours=27))
    check = check_books()
    assert not check.ok
    assert check.detail == f"{casino.code}: the books were last verified over 26 h ago"


def test_a_record_edited_after_it_was_verified_is_found_by_the_weekly_full_run(api, casino):
    """The daily run walks on from its last end; the full run (Sunday night, beat) recomputes everything."""
    ticket = Ticket.objects.get(validation_number=api.issued_ticket("7.00"))
    verify_books_daily()
    tamper("UPDATE tickets_ticket SET amount = %s WHERE id = %s", [Decimal("700.00"), ticket.pk])
    assert verify_books_daily() == 0  # the daily run's stated limit: it trusts what it verified before
    assert verify_books_daily(full=True) == 1
    assert "ticket_events record 1: its content does not match its MAC" in (
        BooksVerification.objects.filter(casino=casino).first().finding
    )
