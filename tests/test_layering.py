"""The apps are layers and everything they hold points down: imports (import-linter, `make lint`), foreign keys,
migration dependencies, templates, the hooks a lower layer is given at start-up, and who writes a ticket.

Bottom to top: casino_office's shared modules ← machines ← staff ← tickets ← compliance ← cashdesk. Django's and
third-party apps (auth's User among them) count as the bottom. ops (the health probe, the heartbeat) stands
beside the domain apps: it may use the bottom only, and no domain app points at it. The composition root
(casino_office.settings, urls, wsgi) wires the apps together and is the one place that names every app.

Each test reads code, templates or the migration graph (no database) and fails naming every violation.
"""

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.db.migrations.loader import MigrationLoader
from django.template import TemplateDoesNotExist, engines
from django.template.backends.django import get_installed_libraries

ROOT = Path(__file__).resolve().parent.parent
BOTTOM = "casino_office"
LAYERS = ("machines", "staff", "tickets", "compliance", "cashdesk")  # bottom to top
BESIDE = ("ops",)
PROJECT_APPS = (BOTTOM, *LAYERS, *BESIDE)
COMPOSITION_ROOT = ("casino_office.settings", "casino_office.urls", "casino_office.wsgi")
MAX_FUNCTION_LINES = 60


def may_depend(app: str, on: str | None) -> bool:
    """Whether project app `app` may point at `on` (a project app, or None for Django's and third parties')."""
    if on is None or on in (app, BOTTOM):
        return True
    if app == BOTTOM or app in BESIDE or on in BESIDE:
        return False
    return LAYERS.index(on) < LAYERS.index(app)


def why_not(app: str, on: str) -> str:
    if app == BOTTOM:
        return "the shared bottom (casino_office, templates/) points at no app"
    if app in BESIDE or on in BESIDE:
        return "ops stands beside the domain apps"
    return f"{on} is above {app}"


def app_of(dotted: str) -> str | None:
    """The project app that a module path or app label belongs to; None for Django and third parties."""
    top = dotted.split(".")[0]
    return top if top in PROJECT_APPS else None


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def app_of_path(path: Path) -> str | None:
    return app_of(path.relative_to(ROOT).parts[0])


def python_files(*, skip: tuple[str, ...] = ()) -> Iterator[Path]:
    """The project apps' Python files, except those whose path contains one of `skip`."""
    for app in PROJECT_APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if not any(part in rel(path) for part in skip):
                yield path


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def report(problems: list[str], what: str) -> str:
    return f"{len(problems)} {what}:\n  " + "\n  ".join(problems)


# Foreign keys


def test_every_relation_points_at_its_own_app_or_a_lower_layer():
    problems = []
    for model in apps.get_models():
        app = app_of(model._meta.app_label)
        if app is None:
            continue
        for field in model._meta.get_fields(include_parents=False):
            if not field.is_relation or field.auto_created or field.related_model is None:
                continue
            target = field.related_model._meta
            on = app_of(target.app_label)
            if not may_depend(app, on):
                problems.append(
                    f"{model._meta.label}.{field.name} ({type(field).__name__}) -> {target.label}: {why_not(app, on)}"
                )
    assert not problems, report(problems, "relations point up or sideways")


# Migrations

# Written before the layering was checked, when cashdesk owned the desks: applied on every running database, so
# rewriting their dependencies is not safe. Frozen: the set may only shrink (a squash may drop an entry).
HISTORICAL_UPWARD_DEPENDENCIES = frozenset(
    {
        "compliance.0001_initial -> cashdesk.0001_initial",
        "compliance.0002_register_guards -> cashdesk.0003_ledger_append_only",
        "compliance.0004_verbose_names -> cashdesk.0005_verbose_names",
        "compliance.0005_money_core -> cashdesk.0007_money_core",
        "staff.0001_initial -> cashdesk.0010_staff_moved_to_staff_app",
        "tickets.0001_initial -> cashdesk.0001_initial",
        "tickets.0003_report_indexes -> cashdesk.0003_ledger_append_only",
        "tickets.0004_expiry_keyset_index -> cashdesk.0003_ledger_append_only",
        "tickets.0005_verbose_names -> cashdesk.0005_verbose_names",
    }
)


def _migrations() -> dict[tuple[str, str], Any]:
    return MigrationLoader(None, ignore_no_migrations=True).disk_migrations


def _dependency_app(label: str) -> str | None:
    return None if label == "__setting__" else app_of(label)  # a swappable model: AUTH_USER_MODEL, the bottom


def _upward_dependencies() -> dict[str, str]:
    """'app.migration -> app.migration' of every dependency that points up or sideways, with the reason."""
    upward = {}
    for (label, name), migration in _migrations().items():
        app = app_of(label)
        if app is None:
            continue
        for on_label, on_name in migration.dependencies:
            on = _dependency_app(on_label)
            if not may_depend(app, on):
                upward[f"{label}.{name} -> {on_label}.{on_name}"] = why_not(app, on)
        # run_before makes the other migration depend on this one.
        for before_label, before_name in getattr(migration, "run_before", []):
            before = app_of(before_label)
            if before is not None and not may_depend(before, app):
                upward[f"{before_label}.{before_name} -> {label}.{name} (run_before)"] = why_not(before, app)
    return upward


def test_migrations_depend_on_their_own_app_or_lower_layers():
    upward = _upward_dependencies()
    new = [f"{edge}: {why}" for edge, why in sorted(upward.items()) if edge not in HISTORICAL_UPWARD_DEPENDENCIES]
    gone = sorted(HISTORICAL_UPWARD_DEPENDENCIES - upward.keys())
    problems = new + [
        f"HISTORICAL_UPWARD_DEPENDENCIES names {edge}, which no longer exists or no longer points up: "
        "remove it from the set"
        for edge in gone
    ]
    assert not problems, report(problems, "migration dependencies point up or sideways")


# Keyword arguments through which makemigrations names a live function of a field (a validator, a default): the
# autodetector compares them with the model's, so they must name the live function; a migration never calls them.
FIELD_REFERENCES = {"validators", "default"}


def _field_references_only(tree: ast.AST, module: str) -> bool:
    """Whether every use of `module` in the migration is inside a field's validators= or default=."""
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in FIELD_REFERENCES:
            allowed.update(id(inner) for inner in ast.walk(node.value))
    uses = [node for node in ast.walk(tree) if isinstance(node, ast.Attribute) and ast.unparse(node) == module]
    return all(id(use) in allowed for use in uses)


def test_migrations_import_no_project_code():
    """A migration is history: it must run the same in a year, whatever the live modules have become by then.

    What it needs (SQL, a trigger's text, a helper) is copied into it when it is written, or into a module of a
    migrations package (`casino_office/migrations/_frozen.py`), which is history too and never edited. The one
    exception is what makemigrations writes itself: a field's validator or default, named by its live path.
    """
    problems = []
    for (label, _), migration in sorted(_migrations().items()):
        if app_of(label) is None:
            continue
        path = Path(importlib.import_module(migration.__module__).__file__ or "")
        tree = parse(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                names = ", ".join(alias.name for alias in node.names)
                if (node.level or app_of(module)) and ".migrations." not in f"{module}.":
                    problems.append(f"{rel(path)}:{node.lineno}: from {module} import {names}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if app_of(alias.name) and not _field_references_only(tree, alias.name):
                        problems.append(f"{rel(path)}:{node.lineno}: import {alias.name}")
    assert not problems, report(problems, "imports of live project code in migrations")


# Templates

TEMPLATE_TAG = re.compile(r"{%\s*(extends|include|load)\s+(.*?)\s*%}")


def _template_dirs() -> Iterator[tuple[str, Path]]:
    yield BOTTOM, ROOT / "templates"
    for app in PROJECT_APPS:
        yield app, ROOT / app / "templates"


def _template_owner(name: str) -> tuple[str | None, str]:
    """The app whose template `name` resolves to (BOTTOM for the shared templates) and where it was found."""
    _, origin = engines["django"].engine.find_template(name)
    path = Path(origin.name).resolve()
    if not path.is_relative_to(ROOT) or path.is_relative_to(ROOT / ".venv"):
        return None, str(path)
    return (BOTTOM if path.relative_to(ROOT).parts[0] == "templates" else app_of_path(path)), rel(path)


def _library_owner(name: str) -> tuple[str | None, str]:
    libraries = {**get_installed_libraries(), **engines["django"].engine.libraries}
    module = libraries.get(name, "")
    return app_of(module), module


def _template_problems(app: str, path: Path) -> Iterator[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    for match in TEMPLATE_TAG.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        where, tag, argument = f"{rel(path)}:{line}", match.group(1), match.group(2)
        if tag == "load":
            words = argument.split()
            names = words[-1:] if "from" in words else words
            for library in names:
                on, module = _library_owner(library)
                if not module:
                    yield f"{where}: {{% load {library} %}}: no such tag library"
                elif not may_depend(app, on):
                    yield f"{where}: {{% load {library} %}} is {module}: {why_not(app, on)}"
            continue
        literal = re.match(r"""(["'])(.+?)\1""", argument)
        if literal is None:
            continue  # a name computed at run time; nothing to read here
        name = literal.group(2)
        try:
            on, found = _template_owner(name)
        except TemplateDoesNotExist:
            yield f"{where}: {{% {tag} {name!r} %}}: no such template"
            continue
        if not may_depend(app, on):
            yield f"{where}: {{% {tag} {name!r} %}} is {found}: {why_not(app, on)}"


def test_templates_extend_include_and_load_only_their_own_app_or_lower_layers():
    problems = []
    for app, folder in _template_dirs():
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                problems.extend(_template_problems(app, path))
    assert not problems, report(problems, "template references point up or sideways")


# The hooks a lower layer is given at start-up


def test_every_port_is_provided_by_its_own_layer_or_above():
    """One mechanism hands a lower layer what a higher one implements (casino_office.ports): the lower module
    declares a Port at module level, the higher app's AppConfig.ready provides it."""
    try:
        ports = importlib.import_module("casino_office.ports")
    except ModuleNotFoundError as error:
        if error.name != "casino_office.ports":
            raise
        pytest.fail(
            "casino_office.ports does not exist yet: the lower layers' hooks (tickets.kiosks, tickets.reconciliation,"
            " compliance.history) must be Ports of casino_office.ports, provided in the higher apps' ready()"
        )
    # A port whose module nothing imported at start-up is still a port: import every module to see them all.
    for path in python_files(skip=("/migrations/",)):
        importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"))
    problems = []
    if not ports.all_ports():
        problems.append("casino_office.ports.all_ports() lists no port: the lower layers' hooks are ports")
    for port in ports.all_ports():
        owner = app_of(port.owner)
        declared = [name for name, value in vars(importlib.import_module(port.owner)).items() if value is port]
        label = f"{port.owner}.{declared[0]}" if declared else f"{port!r} of {port.owner}"
        if owner is None or not declared:
            problems.append(f"{label}: a port is declared at module level in a project app's module")
        if not port.providers:
            problems.append(f"{label}: nobody provides it")
        for provider in port.providers:
            app = app_of(provider)
            if app is None or owner is None or not may_depend(app, owner):
                reason = why_not(app, owner) if app and owner else "not a project app's module"
                problems.append(f"{label} is provided by {provider}: {reason}")
    assert not problems, report(problems, "ports wired against the layers")


REGISTRY_METHODS = {"append", "extend", "insert", "add", "update", "setdefault", "__setitem__"}


def _imported_names(function: ast.AST) -> dict[str, str]:
    """Name bound by an import inside `function` -> the dotted name of what it binds (for `import a.b`, a.b)."""
    names = {}
    for node in ast.walk(function):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name
    return names


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _ready_problems(path: Path) -> Iterator[str]:
    app = app_of_path(path)
    module = parse(path)
    for cls in (node for node in module.body if isinstance(node, ast.ClassDef)):
        for method in (node for node in cls.body if isinstance(node, ast.FunctionDef)):
            where = f"{rel(path)}:{{}}: {cls.name}.{method.name}"
            names = {**_imported_names(module), **_imported_names(method)}
            foreign = {name: source for name, source in names.items() if app_of(source) not in (None, app)}
            for node in ast.walk(method):
                if isinstance(node, ast.ImportFrom) and app_of(node.module or "") not in (None, app):
                    for alias in node.names:
                        if alias.name.startswith("register_"):
                            yield (
                                where.format(node.lineno) + f" imports {alias.name} from {node.module}: "
                                "a registry filled from another app (provide a casino_office.ports.Port instead)"
                            )
                if isinstance(node, ast.Assign):
                    targets = node.targets  # binding a plain name is the method's own business
                elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                    targets = [node.target]
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    targets = [node.func.value] if node.func.attr in REGISTRY_METHODS else []
                    targets = [target for target in targets if isinstance(target, ast.Name | ast.Attribute)]
                else:
                    continue
                for target in targets:
                    root = _root_name(target)
                    if root in foreign and (isinstance(node, ast.Call) or not isinstance(target, ast.Name)):
                        yield (
                            where.format(node.lineno) + f" writes into {foreign[root]} ({ast.unparse(target)}): "
                            "another app's module-level registry (provide a casino_office.ports.Port instead)"
                        )


def test_no_app_config_fills_another_apps_registry():
    problems = []
    for app in PROJECT_APPS:
        path = ROOT / app / "apps.py"
        if path.exists():
            problems.extend(_ready_problems(path))
    assert not problems, report(problems, "registries filled directly at start-up")


def _settings_read(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "settings":
            yield node.lineno, node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == "settings"
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            yield node.lineno, node.args[1].value


def _dotted_paths(value: object) -> Iterator[str]:
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", str(value)):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _dotted_paths(item)


def test_no_setting_hands_a_lower_app_code_of_a_higher_one():
    """A setting that names a higher app's class for a lower app to import is an upward import in disguise."""
    problems = []
    for path in python_files(skip=("/migrations/",)):
        app = app_of_path(path)
        if app is None or rel(path) in {f"{module.replace('.', '/')}.py" for module in COMPOSITION_ROOT}:
            continue
        for line, name in _settings_read(parse(path)):
            for dotted in _dotted_paths(getattr(settings, name, None)):
                on = app_of(dotted)
                if not may_depend(app, on):
                    problems.append(f"{rel(path)}:{line} reads settings.{name} = {dotted!r}: {why_not(app, on)}")
    assert not problems, report(problems, "settings hand a lower app a higher app's code")


# Only tickets changes a ticket

UPDATE_TICKETS_SQL = re.compile(r'\bUPDATE\s+"?tickets_ticket\b', re.IGNORECASE)
WRITE_METHODS = {"update", "create", "get_or_create", "update_or_create", "bulk_create"}


def _on_a_ticket(node: ast.expr) -> bool:
    return "ticket" in ast.unparse(node).lower()


def _names_state(node: ast.expr) -> bool:
    return any(isinstance(item, ast.Constant) and item.value == "state" for item in ast.walk(node))


def _ticket_state_writes(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Attribute) and target.attr == "state" and _on_a_ticket(target.value):
                    yield node.lineno, f"assigns {ast.unparse(target)}"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver, method = node.func.value, node.func.attr
            keywords = {keyword.arg for keyword in node.keywords}
            if method in WRITE_METHODS and "state" in keywords and _on_a_ticket(receiver):
                yield node.lineno, f"{ast.unparse(node.func)}(state=...)"
            elif method == "bulk_update" and _on_a_ticket(receiver) and any(map(_names_state, node.args)):
                yield node.lineno, f"{ast.unparse(node.func)}(..., ['state'])"
            elif method == "save" and _on_a_ticket(receiver) and any(_names_state(k.value) for k in node.keywords):
                yield node.lineno, f"{ast.unparse(node.func)}(update_fields=['state'])"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            if len(node.args) >= 2 and _on_a_ticket(node.args[0]) and _names_state(node.args[1]):
                yield node.lineno, f"setattr({ast.unparse(node.args[0])}, 'state', ...)"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and UPDATE_TICKETS_SQL.search(node.value):
            yield node.lineno, "raw SQL UPDATE tickets_ticket"


def test_only_tickets_writes_a_tickets_state():
    """tickets.services and tickets.desk hold every transition; any other app asks them (tickets/models.py).

    Every project app's module outside tickets/ is read, its migrations and management commands included. Tests and
    bench/ are not: they set up states on scratch databases.
    """
    problems = []
    for path in python_files():
        if app_of_path(path) == "tickets":
            continue
        for line, what in sorted(_ticket_state_writes(parse(path))):
            problems.append(f"{rel(path)}:{line}: {what}")
    assert not problems, report(problems, "writes of a ticket's state outside tickets/")


# Size

SIZE_EXEMPT = ("/migrations/", "/management/commands/")


def _source_files_for_size() -> Iterator[Path]:
    """The project's code: every Python file but the tests, benchmarks, migrations and management commands."""
    skipped = {"tests", "bench", ".venv", "var", "node_modules"}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if parts[0] in skipped or parts[0].startswith(".") or any(exempt in rel(path) for exempt in SIZE_EXEMPT):
            continue
        yield path


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def test_no_function_is_longer_than_sixty_lines():
    """From `def` (decorators not counted) to the last line of its body, docstring and comments included."""
    problems = []
    for path in _source_files_for_size():
        for name, function in _functions(parse(path)):
            length = (function.end_lineno or function.lineno) - function.lineno + 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{rel(path)}:{function.lineno}: {name} is {length} lines")
    assert not problems, report(problems, f"functions longer than {MAX_FUNCTION_LINES} lines")
