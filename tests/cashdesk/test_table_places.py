"""A gaming table's places in the books (issue 24): its chip tray and drop box, made with it, empty, one of each."""

import pytest
from django.db import IntegrityError, transaction

from cashdesk.books import place_balances
from cashdesk.models import TablePlaces
from cashdesk.services.tables import table_create
from machines.models import GamingTable, Place, TableGame

pytestmark = pytest.mark.django_db


def test_a_table_is_made_with_its_empty_chip_tray_and_drop_box(casino):
    table = table_create(casino=casino, number="AR1", game=TableGame.AMERICAN_ROULETTE, area="Salė")

    books = TablePlaces.objects.get(table=table)
    assert (books.tray.kind, books.tray.code, books.tray.casino) == (Place.Kind.TRAY, "TRAY-AR1", casino)
    assert (books.drop_box.kind, books.drop_box.code, books.drop_box.casino) == (
        Place.Kind.DROP_BOX,
        "DROP-AR1",
        casino,
    )
    assert not any(place_balances(books.tray).values())
    assert not any(place_balances(books.drop_box).values())
    assert str(books) == "AR1 (American roulette)"


def test_a_table_that_cannot_be_made_leaves_no_place(casino):
    table_create(casino=casino, number="BJ1", game=TableGame.BLACK_JACK)
    places = Place.objects.count()
    with pytest.raises(IntegrityError), transaction.atomic():
        table_create(casino=casino, number="BJ1", game=TableGame.BLACK_JACK)
    with pytest.raises(IntegrityError), transaction.atomic():
        table_create(casino=casino, number="X1", game="baccarat")
    assert Place.objects.count() == places
    assert GamingTable.objects.count() == TablePlaces.objects.count() == 1


def test_the_database_keeps_a_table_s_places_apart_and_takes_no_unknown_kind(casino):
    books = TablePlaces.objects.get(table=table_create(casino=casino, number="TP1", game=TableGame.TEXAS_POKER))
    with pytest.raises(IntegrityError), transaction.atomic():
        TablePlaces.objects.filter(pk=books.pk).update(drop_box=books.tray)
    with pytest.raises(IntegrityError), transaction.atomic():
        Place.objects.create(casino=casino, kind="bank", code="B-1", name="Unknown kind")
