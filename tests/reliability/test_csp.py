"""The Content-Security-Policy: every page carries the strict policy, and no page or template has inline code.

No inline script or style, no event-handler attribute, no outside origin: an injected
<script> or style= is refused by the browser. The browser suite (tests/browser) fails on
any violation in the console; these tests hold the header and the pages' HTML to it.
"""

import re
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.test import Client

from cashdesk import charts, services
from machines.models import Place
from staff.models import StaffAssignment
from tests.factories import make_user
from tests.reliability.test_security import EVERYONE, ROLES, TABLE, _urls
from tickets.api.urls import REDOC_STYLE_HASHES

POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "frame-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
# The receipt and the other PDFs are shown in a frame of the desk's own pages.
PDF_POLICY = {**POLICY, "frame-ancestors": ["'self'"]}

FLOAT = {"cash": Decimal("20000.00"), "chip_100": 10, "token": 100}
OUR_APPS = {"machines", "staff", "tickets", "cashdesk", "compliance", "ops"}


REDOC = "/api/v1/redoc/"


def _nonce_of(response) -> str:
    found = re.findall(r'nonce="([^"]+)"', response.content.decode())
    assert len(found) == 1, found
    return found[0]


def _policy(response) -> dict[str, list[str]]:
    header = response.headers.get("Content-Security-Policy")
    assert header, (response.request["PATH_INFO"], response.status_code, "no Content-Security-Policy")
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


class _InlineCode(HTMLParser):
    """What a strict policy refuses in a page: <script> without src, <style>, style= and on*= attributes,
    javascript: URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        names = dict(attrs)
        if tag == "script" and not names.get("src"):
            self._in_script = True
        if tag == "style":
            self.found.append("<style>")
        for name, value in attrs:
            if name == "style" or name.startswith("on"):
                self.found.append(f"<{tag} {name}=...>")
            if value and value.strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}=javascript:...>")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.found.append(f"<script>{data.strip()[:40]}...")


def inline_code_in(html: str) -> list[str]:
    parser = _InlineCode()
    parser.feed(html)
    return parser.found


def _assert_strict(response, path: str) -> None:
    content_type = response.headers.get("Content-Type", "")
    expected = PDF_POLICY if content_type.startswith("application/pdf") else POLICY
    policy = _policy(response)
    if path.startswith(REDOC):
        nonce = _nonce_of(response)
        expected = {**expected, "style-src": ["'self'", f"'nonce-{nonce}'", *REDOC_STYLE_HASHES]}
    assert policy == expected, path
    assert "'unsafe-inline'" not in response.headers["Content-Security-Policy"]
    if content_type.startswith("text/html"):
        assert not inline_code_in(response.content.decode()), (path, inline_code_in(response.content.decode()))


@pytest.fixture
def day(casino):
    """A cashier's shift with a transaction, and a client for every role (assigned to the casino)."""
    clients = {"anonymous": Client()}
    users = {}
    for role in ROLES[1:]:
        users[role] = make_user(f"csp-{role}", *([] if role == "nobody" else [role]))
        StaffAssignment.objects.create(user=users[role], casino=casino)
        clients[role] = Client()
        clients[role].force_login(users[role])
    desk = Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=Decimal("500000.00"))
    Place.objects.create(casino=casino, code="V", name="Seifas", kind=Place.Kind.VAULT)
    shift = services.shift_open(desk=desk, cashier=users["cashier"], counted=FLOAT)
    tx = services.tokens_buy(shift=shift, user=users["cashier"], count=3)
    return clients, shift, tx


def test_every_page_of_the_role_table_carries_the_strict_policy(day):
    clients, _, _ = day
    html_pages = 0
    for name, path in _urls():
        method, allowed = TABLE.get(name, ("GET", EVERYONE))  # a new page not in the table yet: as anyone
        if method != "GET" or not isinstance(allowed, set):
            continue
        role = "anonymous" if allowed == EVERYONE else sorted(allowed)[0]
        response = clients[role].get(path)
        if response.status_code == 302:
            continue
        _assert_strict(response, path)
        html_pages += response.headers.get("Content-Type", "").startswith("text/html")
    assert html_pages >= 25


def test_the_working_pages_carry_the_policy_and_no_inline_code(day):
    clients, shift, tx = day
    pages = {
        "anonymous": ["/accounts/login/", "/api/v1/docs/", "/api/v1/redoc/", "/no-such-page/"],
        "cashier": [
            "/desk/",
            "/desk/sell/",
            "/desk/chips/",
            f"/desk/transactions/{tx.pk}/",  # the receipt in a frame
            f"/shifts/{shift.pk}/",
            f"/documents/receipt/{tx.pk}.pdf",
            "/floor/receipts/",  # refused (403): the refusal page too
        ],
        "manager": ["/dashboard/", "/reports/?report=books", "/reports/?report=liability"],
        "shift_supervisor": ["/supervisor/", "/supervisor/vault/"],
        "compliance_officer": [
            "/compliance/purpose/",
            "/compliance/",
            "/compliance/alerts/",
            "/compliance/access-log/",
        ],
    }
    clients["compliance_officer"].post("/compliance/purpose/", {"purpose": "Patikrinimas", "next": ""})
    for role, paths in pages.items():
        for path in paths:
            response = clients[role].get(path)
            assert response.status_code == (403 if path == "/floor/receipts/" else 404 if "no-such" in path else 200), (
                role,
                path,
                response.status_code,
            )
            _assert_strict(response, path)


def test_the_receipt_pdf_may_be_framed_by_the_office_only_and_pages_not_at_all(day):
    clients, _, tx = day
    page = clients["cashier"].get(f"/desk/transactions/{tx.pk}/")
    pdf = clients["cashier"].get(f"/documents/receipt/{tx.pk}.pdf")
    assert _policy(page)["frame-ancestors"] == ["'none'"]
    assert page["X-Frame-Options"] == "DENY"
    assert _policy(pdf)["frame-ancestors"] == ["'self'"]
    assert pdf["X-Frame-Options"] == "SAMEORIGIN"
    html = page.content.decode()
    assert "<iframe" not in html  # the receipt is shown on the page; its PDF opens in a tab of its own
    assert f'id="receipt" href="/documents/receipt/{tx.pk}.pdf" target="_blank"' in html


def test_the_admin_carries_the_policy_and_no_inline_code(casino):
    admin = make_user("csp-admin")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client = Client()
    client.force_login(admin)
    for path in (
        "/admin/",
        "/admin/machines/casino/",
        "/admin/machines/casino/add/",
        f"/admin/machines/casino/{casino.pk}/change/",
        "/admin/machines/machine/",
        "/admin/tickets/ticket/",
        "/admin/machines/place/add/",
        "/admin/cashdesk/cashtransaction/",
        "/admin/auth/user/",
        f"/admin/auth/user/{admin.pk}/change/",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        _assert_strict(response, path)


def _templates() -> list[Path]:
    folders = [Path(folder) for engine in settings.TEMPLATES for folder in engine["DIRS"]]
    folders += [Path(config.path) / "templates" for config in apps.get_app_configs() if config.name in OUR_APPS]
    return sorted(path for folder in folders if folder.is_dir() for path in folder.rglob("*.html"))


INLINE_IN_TEMPLATE = re.compile(
    r"<style\b|<script\b(?![^>]*\bsrc=)[^>]*>|<[a-zA-Z][^>]*\s(?:style|on[a-z]+)\s*=|javascript:", re.IGNORECASE
)


def test_no_template_has_inline_script_style_or_handlers():
    templates = _templates()
    assert len(templates) >= 25
    found = {
        str(path.relative_to(settings.BASE_DIR)): INLINE_IN_TEMPLATE.findall(path.read_text(encoding="utf-8"))
        for path in templates
    }
    assert not {path: hits for path, hits in found.items() if hits}


@pytest.mark.parametrize(
    "snippet",
    [
        '<p style="color:red">',
        "<style>p{}</style>",
        "<script>alert(1)</script>",
        '<button onclick="go()">',
        '<a href="javascript:go()">',
        "<form\n  onsubmit='x()'>",
    ],
)
def test_the_template_check_sees_inline_code(snippet):
    assert INLINE_IN_TEMPLATE.search(snippet)
    assert inline_code_in(snippet)


def test_the_template_check_lets_external_files_pass():
    html = '<script src="/static/desk.js" defer></script><link rel="stylesheet" href="/static/site.css">'
    assert not INLINE_IN_TEMPLATE.search(html)
    assert not inline_code_in(html)


def test_the_charts_draw_without_style_attributes():
    svg = "".join(
        [
            charts.grouped_bars(["08", "09"], [charts.Series("Out", [1, 2], "out")], "Tickets"),
            charts.line([("1", Decimal(1)), ("2", Decimal(3))], "Liability"),
            charts.limit_bars([("Kasa 1", Decimal(10), Decimal(5))], "Cash"),
        ]
    )
    assert "<svg" in svg
    assert not inline_code_in(svg)


def test_the_api_docs_start_swagger_ui_from_a_script_file(db):
    page = Client().get("/api/v1/docs/")
    scripts = re.findall(r'<script src="([^"]+)"', page.content.decode())
    start_up = [src for src in scripts if "script" in src.split("?")[-1]]
    assert len(start_up) == 1, scripts
    script = Client().get(start_up[0].replace("&amp;", "&"))
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle(" in script.content.decode()


def test_redoc_may_add_style_elements_with_its_pages_nonce_and_its_scrollbar_stylesheet_only(db):
    assert all(value.startswith("'sha256-") for value in REDOC_STYLE_HASHES)  # hashes of fixed text, nothing broader
    first, second = Client().get(REDOC), Client().get(REDOC)
    nonces = [_nonce_of(first), _nonce_of(second)]
    assert nonces[0] != nonces[1]  # one per response
    for response, nonce in zip((first, second), nonces, strict=True):
        assert _policy(response)["style-src"] == ["'self'", f"'nonce-{nonce}'", *REDOC_STYLE_HASHES]
        assert _policy(response)["script-src"] == ["'self'"]
        assert "fonts.googleapis.com" not in response.content.decode()  # nothing from outside
    assert _policy(Client().get("/api/v1/docs/"))["style-src"] == ["'self'"]
