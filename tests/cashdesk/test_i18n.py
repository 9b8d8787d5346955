"""Lithuanian and English: complete catalogs, a per-user switch, locale formats, no English on Lithuanian screens."""

import re
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import translation

from cashdesk import services
from casino_office.management.commands.translations import copy_sources, po_path
from casino_office.money import format_money
from staff.models import StaffAssignment, StaffPreference
from tests.factories import make_user, with_key
from tests.i18n_words import english_in, english_words

ROOT = Path(settings.BASE_DIR)


@pytest.mark.slow
def test_the_catalogs_are_complete_and_compiled():
    call_command("translations", "--check")  # raises CommandError naming what is missing


@pytest.mark.slow
def test_the_check_fails_on_a_text_nobody_translated(tmp_path):
    copy_sources(ROOT, tmp_path)
    page = tmp_path / "templates" / "new_page.html"
    page.write_text('{% load i18n %}<p>{% translate "A sentence nobody translated yet" %}</p>\n')
    with pytest.raises(CommandError, match="A sentence nobody translated yet"):
        call_command("translations", "--check", "--root", str(tmp_path))


@pytest.mark.slow
def test_the_check_fails_on_a_fuzzy_or_empty_translation(tmp_path):
    copy_sources(ROOT, tmp_path)
    catalog = polib.pofile(str(po_path(tmp_path, "lt")))
    entry = catalog.find("Open shift")
    assert entry is not None
    entry.msgstr = ""
    catalog.save()
    with pytest.raises(CommandError, match="lt: untranslated 'Open shift'"):
        call_command("translations", "--check", "--root", str(tmp_path))


def test_amounts_follow_the_readers_locale():
    assert format_money(Decimal("1234.56"), "lt") == "1\u00a0234,56\u00a0€"
    assert format_money(Decimal("1234.56"), "en") == "€1,234.56"
    assert format_money(Decimal("1.001"), "lt") == "1,001\u00a0€"  # a ticket's third decimal is kept
    assert format_money(Decimal("-10"), "lt") == "-10,00\u00a0€"
    with translation.override("lt"):
        assert format_money(Decimal("1000000")) == "1\u00a0000\u00a0000,00\u00a0€"


class _Text(HTMLParser):
    """The words a person reads on a page: text nodes and the attributes shown on screen."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if name in ("title", "placeholder", "aria-label", "alt") and value:
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def _lithuanian_client(user) -> Client:
    StaffPreference.objects.update_or_create(user=user, defaults={"language": "lt"})
    client = Client()
    client.force_login(user)
    return client


def _english_on(client: Client, path: str, method: str = "get", data=None) -> set[str]:
    response = getattr(client, method)(path, data or {}, follow=True)
    assert response.status_code in (200, 403), (path, response.status_code)
    assert response["Content-Language"] == "lt"
    parser = _Text()
    parser.feed(response.content.decode())
    return english_in(" ".join(parser.parts))


def test_a_lithuanian_cashier_meets_no_english_word(api, casino, shift, cashier, floor):
    StaffAssignment.objects.create(user=cashier, casino=casino)
    assert {"ticket", "shift", "cash", "pay"} <= english_words()  # the check can see English
    client = _lithuanian_client(cashier)
    number = api.issued_ticket("12.34")
    tx = services.tokens_buy(shift=shift, user=cashier, count=3)
    pages = [
        "/desk/",
        "/desk/sell/",
        "/desk/chips/",
        "/desk/tokens/",
        "/desk/smartcard/",
        "/desk/receipt-payout/",
        "/desk/transfer/",
        "/desk/handover/",
        "/desk/close/",
        f"/desk/transactions/{tx.pk}/",
        f"/desk/reverse/{tx.pk}/",
        f"/shifts/{shift.pk}/",
        "/floor/receipts/",  # not a cashier's page: the refusal is Lithuanian too
    ]
    found = {path: _english_on(client, path) for path in pages}
    # A scanned ticket, and an invalid number: the refusal too.
    found["/desk/ticket/ (scanned)"] = _english_on(client, "/desk/ticket/", "post", {"number": number})
    found["/desk/ticket/ (invalid)"] = _english_on(client, "/desk/ticket/", "post", {"number": "123"})
    # A form sent back with errors.
    found["/desk/sell/ (errors)"] = _english_on(client, "/desk/sell/", "post", {"amount": "-1"})
    assert not any(found.values()), {path: words for path, words in found.items() if words}


def test_supervisor_manager_and_compliance_pages_are_lithuanian(casino, supervisor, manager, compliance, shift):
    for user, pages in (
        (supervisor, ["/dashboard/", "/supervisor/", "/reports/?report=exceptions", "/reports/?report=liability"]),
        (
            manager,
            ["/dashboard/", "/reports/?report=machines", "/reports/?report=desks", "/reports/?report=exceptions"],
        ),
        (compliance, ["/compliance/", "/compliance/purpose/", "/compliance/alerts/", "/compliance/self-exclusion/"]),
    ):
        StaffAssignment.objects.create(user=user, casino=casino)
        client = _lithuanian_client(user)
        found = {path: _english_on(client, path) for path in pages}
        assert not any(found.values()), (user.username, {p: w for p, w in found.items() if w})


def test_the_switch_is_stored_per_user(casino, cashier, shift):
    StaffAssignment.objects.create(user=cashier, casino=casino)
    client = Client()
    client.force_login(cashier)
    assert client.get("/desk/")["Content-Language"] == settings.LANGUAGE_CODE
    response = client.post("/language/", {"language": "lt", "next": "/desk/"})
    assert response.status_code == 302
    assert response["Location"] == "/desk/"
    assert StaffPreference.objects.get(user=cashier).language == "lt"
    page = client.get("/desk/").content.decode()
    assert "Parduoti bilietą" in page
    assert "Sell ticket" not in page

    # Another browser, same person: the choice follows the user, not the cookie.
    elsewhere = Client()
    elsewhere.force_login(cashier)
    assert "Parduoti bilietą" in elsewhere.get("/desk/").content.decode()

    client.post("/language/", {"language": "en", "next": "/desk/"})
    assert "Sell ticket" in client.get("/desk/").content.decode()
    assert StaffPreference.objects.get(user=cashier).language == "en"


def test_the_switch_refuses_unknown_languages_and_foreign_redirects(casino, cashier):
    client = Client()
    client.force_login(cashier)
    refused = client.post("/language/", {"language": "xx"})
    assert refused.status_code == 400
    assert not StaffPreference.objects.filter(user=cashier).exists()
    response = client.post("/language/", {"language": "lt", "next": "https://evil.example/"})
    assert response["Location"] == "/"


def test_the_login_page_follows_the_cookie(db, settings):
    settings.LANGUAGE_CODE = "lt"  # the casinos' default, before anyone chose
    client = Client()
    assert "Prisijungti" in client.get("/accounts/login/").content.decode()
    client.post("/language/", {"language": "lt", "next": "/accounts/login/"})
    assert "Prisijungti" in client.get("/accounts/login/").content.decode()
    client.post("/language/", {"language": "en", "next": "/accounts/login/"})
    assert "Log in" in client.get("/accounts/login/").content.decode()


def test_the_machine_api_always_answers_in_english(api, settings):
    settings.LANGUAGE_CODE = "lt"
    api.client.cookies[settings.LANGUAGE_COOKIE_NAME] = "lt"
    response = api.get("tickets/123")
    assert response["Content-Language"] == "en"
    body = response.json()
    assert body["code"]
    assert not re.search(r"[ąčęėįšųūž]", response.content.decode(), re.IGNORECASE)


@pytest.mark.slow
def test_update_extracts_new_texts_fills_english_and_leaves_lithuanian_to_translate(tmp_path):
    copy_sources(ROOT, tmp_path)
    (tmp_path / "templates" / "new_page.html").write_text('{% load i18n %}{% translate "Weigh the zebra crate" %}\n')
    call_command("translations", "--root", str(tmp_path))
    english = polib.pofile(str(po_path(tmp_path, "en"))).find("Weigh the zebra crate")
    lithuanian = polib.pofile(str(po_path(tmp_path, "lt"))).find("Weigh the zebra crate")
    assert english is not None
    assert english.msgstr == "Weigh the zebra crate"
    assert lithuanian is not None
    assert lithuanian.msgstr == ""
    compiled = {entry.msgid for entry in polib.mofile(str(po_path(tmp_path, "en").with_suffix(".mo")))}
    assert "Weigh the zebra crate" in compiled
    with pytest.raises(CommandError, match="lt: untranslated 'Weigh the zebra crate'") as refused:
        call_command("translations", "--check", "--root", str(tmp_path))
    assert "en:" not in str(refused.value)


def test_the_access_log_reads_in_lithuanian(casino, compliance, desk):
    StaffAssignment.objects.create(user=compliance, casino=casino)
    client = _lithuanian_client(compliance)
    client.post("/compliance/purpose/", {"purpose": "Patikra", "next": "/compliance/"})
    assert (
        client.post("/compliance/", {"kind": "chips_buy", "desk": desk.pk, "person_code": "38401010000"}).status_code
        == 200
    )
    assert (
        client.get("/compliance/export/", {"format": "csv", "start": "2026-11-01", "end": "2026-11-30"}).status_code
        == 200
    )
    assert client.get("/compliance/alerts/").status_code == 200
    assert client.get("/compliance/alerts/", {"status": "open"}).status_code == 200
    page = client.get("/compliance/access-log/").content.decode()
    assert "Registras, " in page
    assert "Įspėjimai: visi" in page
    assert "Įspėjimai, būsena: Atviras" in page
    assert "Grynieji į žetonus; Kasa 1; ieškota pagal asmens kodą ar dokumentą" in page
    assert "Registro išrašas (CSV), 2026-11-01 – 2026-11-30" in page  # noqa: RUF001
    assert not _english_on(client, "/compliance/access-log/")


def test_the_admin_speaks_lithuanian_too(casino, machine):
    casino.name = "Kazino Tornadas"  # the data on the pages in Lithuanian too, so only texts are checked
    casino.save()
    admin = make_user("administratorius")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client = _lithuanian_client(admin)
    pages = [
        "/admin/",
        "/admin/machines/casino/",
        f"/admin/machines/casino/{casino.pk}/change/",
        "/admin/machines/machine/",
        f"/admin/machines/machine/{machine.pk}/change/",
        "/admin/tickets/ticket/",
        "/admin/machines/place/add/",
        "/admin/cashdesk/cashtransaction/",
        "/admin/cashdesk/holdcase/",
    ]
    found = {path: _english_on(client, path) for path in pages}
    assert not any(found.values()), {path: words for path, words in found.items() if words}


def test_a_refused_form_says_so_in_lithuanian_and_changes_nothing(casino, cashier, shift):
    StaffAssignment.objects.create(user=cashier, casino=casino)
    StaffPreference.objects.create(user=cashier, language="lt")
    client = Client(enforce_csrf_checks=True)
    client.force_login(cashier)
    before = shift.transactions.count()
    response = client.post("/desk/sell/", with_key({"amount": "50"}))
    assert response.status_code == 403
    page = response.content.decode()
    assert "Forma nepriimta" in page
    assert shift.transactions.count() == before
    parser = _Text()
    parser.feed(page)
    assert not english_in(" ".join(parser.parts))
