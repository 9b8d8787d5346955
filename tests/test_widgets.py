"""casino_office/widgets.py: LongSelect writes the same select as Django's, in one pass."""

import re

from django import forms

from casino_office.widgets import LongSelect

CHOICES = [("", "—"), ("V-7Q2K", "18:05 · Jonas <Jonaitis> & Co"), ("V-8R3L", "18:09 · Ona Onaitė")]


class _Form(forms.Form):
    plain = forms.CharField(required=False, widget=forms.Select(choices=CHOICES, attrs={"class": "pick"}))
    long = forms.CharField(required=False, widget=LongSelect(choices=CHOICES, attrs={"class": "pick"}))


def _tags(html: str) -> str:
    return re.sub(r">\s+<", "><", str(html)).strip()


def test_long_select_writes_what_django_s_select_writes_with_the_choice_and_the_label_escaped():
    for data in ({}, {"plain": "V-8R3L", "long": "V-8R3L"}):
        form = _Form(data=data) if data else _Form()
        plain, long = _tags(form["plain"]), _tags(form["long"])
        assert long == plain.replace('name="plain"', 'name="long"').replace('id="id_plain"', 'id="id_long"')
    assert "Jonas &lt;Jonaitis&gt; &amp; Co" in long
    assert '<option value="V-8R3L" selected>18:09 · Ona Onaitė</option>' in long
