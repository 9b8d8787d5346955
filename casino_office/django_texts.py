# ruff: noqa: RUF001 - the texts are Django's, typographic quotes and all
"""Texts of Django's admin and forms that Django 5.2's own Lithuanian catalog lacks.

Marked here so `manage.py translations` puts them in locale/lt, which Django
reads before its own catalogs (LOCALE_PATHS): the admin is then Lithuanian
throughout. Drop an entry once Django ships its translation.
"""

from django.utils.translation import gettext_noop

ADMIN_TEXTS = [
    gettext_noop("Skip to main content"),
    gettext_noop("Breadcrumbs"),
    gettext_noop("Model name"),
    gettext_noop("Add link"),
    gettext_noop("Change or view list link"),
    gettext_noop("Toggle theme (current theme: auto)"),
    gettext_noop("Toggle theme (current theme: light)"),
    gettext_noop("Toggle theme (current theme: dark)"),
    gettext_noop("Toggle navigation"),
    gettext_noop("Sidebar"),
    gettext_noop("Start typing to filter…"),
    gettext_noop("Filter navigation items"),
    gettext_noop("Select all objects on this page for an action"),
    gettext_noop("Select this object for an action - {}"),
    gettext_noop("Hide counts"),
    gettext_noop("Show counts"),
    gettext_noop("Clear all filters"),
    gettext_noop("Empty"),
    gettext_noop("Not empty"),
    gettext_noop("View selected %(model)s"),
    gettext_noop("Error:"),
    gettext_noop("Yes, I’m sure"),
    gettext_noop("Added:"),
    gettext_noop("Changed:"),
    gettext_noop("Deleted:"),
    gettext_noop("Added “%(object)s”."),
    gettext_noop("Changed “%(object)s” — %(changes)s"),
    gettext_noop("Deleted “%(object)s.”"),
    gettext_noop("Added {name} “{object}”."),
    gettext_noop("Changed {fields} for {name} “{object}”."),
    gettext_noop("Deleted {name} “{object}”."),
    gettext_noop("Hold down “Control”, or “Command” on a Mac, to select more than one."),
    gettext_noop("The {name} “{obj}” was added successfully."),
    gettext_noop("The {name} “{obj}” was added successfully. You may add another {name} below."),
    gettext_noop("The {name} “{obj}” was changed successfully. You may edit it again below."),
    gettext_noop("The {name} “{obj}” was changed successfully. You may add another {name} below."),
    gettext_noop("The {name} “{obj}” was changed successfully."),
    gettext_noop("The %(name)s “%(obj)s” was deleted successfully."),
    gettext_noop("%(name)s with ID “%(key)s” doesn’t exist. Perhaps it was deleted?"),
    gettext_noop("You don’t have permission to view or edit anything."),
    gettext_noop("This object doesn’t have a change history. It probably wasn’t added via this admin site."),
    gettext_noop("We’re sorry, but the requested page could not be found."),
    gettext_noop("“%(value)s” value must be a decimal number."),
    gettext_noop("“%(value)s” value must be an integer."),
    gettext_noop("“%(value)s” value has an invalid date format. It must be in YYYY-MM-DD format."),
    gettext_noop("“%(value)s” value has the correct format (YYYY-MM-DD) but it is an invalid date."),
    gettext_noop("“%(value)s” value must be either True or False."),
    gettext_noop("Enter a valid JSON."),
    gettext_noop("A JSON object"),
    gettext_noop("Value must be valid JSON."),
]
