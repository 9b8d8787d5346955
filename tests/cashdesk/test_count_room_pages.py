"""The count room's pages (issue 25): the drop team takes a box out, the count team receives it and counts it twice
blind, and a count supervisor approves it; nothing of a box's figures is on a page before two counts agree."""

import re
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import translation

from cashdesk.models import DroppedBox, DropRun
from cashdesk.services.count_room import box_remove, drop_start
from casino_office.money import format_money
from tests.cashdesk.conftest import logged_in_client
from tests.cashdesk.test_count_room import counted_by_two, slot, team  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def key(response) -> str:
    return re.search(r'name="operation_key" value="([0-9a-f]+)"', response.content.decode()).group(1)


def test_a_box_from_the_drop_to_the_approved_count_on_the_pages(casino, team, slot):  # noqa: F811
    machine, tickets = slot
    attendant = logged_in_client(team["attendant"], casino, raise_errors=True)
    page = attendant.get("/count/")
    assert page.status_code == 200
    response = attendant.post("/count/", {"witness": team["security"].pk, "operation_key": key(page)})
    drop = DropRun.objects.get()
    assert response["Location"] == f"/count/drops/{drop.pk}/"
    page = attendant.get(f"/count/drops/{drop.pk}/")
    assert f'value="m-{machine.pk}"' in page.content.decode()
    attendant.post(
        f"/count/drops/{drop.pk}/",
        {"remove": "1", "remove-source": f"m-{machine.pk}", "remove-box_number": "B-77", "remove-bills_in": ""},
    )
    box = DroppedBox.objects.get()

    counters = [logged_in_client(team[name], casino, raise_errors=True) for name in ("counter1", "counter2")]
    counters[0].post(f"/count/drops/{drop.pk}/", {"arrive": "1", "arrive-box_number": "B-77"})
    expected = format_money(box.expected)
    for counter in counters:
        form = counter.get(f"/count/boxes/{box.pk}/")
        assert expected not in form.content.decode()  # blind: the books' figure is nowhere
        before = counter.get(f"/count/drops/{drop.pk}/").content.decode()
        assert expected not in before
        assert "shown once two counts agree" in before
        counter.post(
            f"/count/boxes/{box.pk}/",
            {"operation_key": key(form), "box_number": "B-77", "note_100": "1", "tickets": "\r\n".join(tickets)},
        )
    shown = counters[1].get(f"/count/drops/{drop.pk}/").content.decode()
    assert expected in shown
    assert "2 matched" in shown

    supervisor = logged_in_client(team["supervisor"], casino, raise_errors=True)
    page = supervisor.get(f"/count/drops/{drop.pk}/")
    assert 'id="approve-count"' in page.content.decode()
    supervisor.post(f"/count/drops/{drop.pk}/approve/", {"operation_key": key(page)})
    drop.refresh_from_db()
    assert drop.approved_by == team["supervisor"]


def test_a_difference_beyond_the_limit_asks_for_its_reason_on_the_page(casino, team, slot):  # noqa: F811
    machine, tickets = slot
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1")
    counted_by_two(box, team, {"100": 1, "50": 1}, tickets)  # 50 too many
    supervisor = logged_in_client(team["supervisor"], casino, raise_errors=True)
    page = supervisor.get(f"/count/drops/{drop.pk}/")
    assert f'name="reason_{box.pk}"' in page.content.decode()
    with translation.override("en"):
        refused = supervisor.post(f"/count/drops/{drop.pk}/approve/", {"operation_key": key(page)}, follow=True)
    assert "Choose a reason" in refused.content.decode()
    assert DropRun.objects.get().approved_at is None
    supervisor.post(
        f"/count/drops/{drop.pk}/approve/", {"operation_key": key(page), f"reason_{box.pk}": "investigation"}
    )
    assert DroppedBox.objects.get().reason == "investigation"


def test_the_notes_come_from_the_note_counter_s_file_or_a_clear_error(casino, team, slot):  # noqa: F811
    machine, _tickets = slot
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1")
    counter = logged_in_client(team["counter1"], casino, raise_errors=True)
    counter.post(f"/count/drops/{drop.pk}/", {"arrive": "1", "arrive-box_number": "B-1"})
    form = counter.get(f"/count/boxes/{box.pk}/")
    wrong = SimpleUploadedFile("count.csv", b"Denomination;Pieces\n50;1\n30;2\n", content_type="text/csv")
    with translation.override("en"):
        refused = counter.post(
            f"/count/boxes/{box.pk}/", {"operation_key": key(form), "box_number": "B-1", "note_file": wrong}
        )
    assert "Line 3: not a euro note of 5 to 500." in refused.content.decode()
    for bad, said in ((b"50;\xc2\xb2\n", "is not value, pieces"), (b"500;100000000\n", "is not value, pieces")):
        with translation.override("en"):
            refused = counter.post(
                f"/count/boxes/{box.pk}/",
                {"operation_key": key(form), "box_number": "B-1", "note_file": SimpleUploadedFile("c.csv", bad)},
            )
        assert refused.status_code == 200
        assert said in refused.content.decode()
    assert not box.tallies.exists()
    export = SimpleUploadedFile("count.csv", b"Denomination;Pieces\nEUR 50;1\n20.00;2\n10;1\n", content_type="text/csv")
    counter.post(
        f"/count/boxes/{box.pk}/",
        {"operation_key": key(form), "box_number": "B-1", "note_50": "7", "note_file": export, "tickets": ""},
    )
    tally = box.tallies.get()
    assert (tally.notes, tally.cash) == ({"50": 1, "20": 2, "10": 1}, Decimal("100.00"))
