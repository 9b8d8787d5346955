"""Chained journals: every append-only record of value carries a keyed MAC over its content and its predecessor's.

A journal (the tickets' events, the books, the counts...) is a model that
inherits `Chained`. Each casino has one chain per journal; its head (the last
sequence number and MAC) sits in `ChainHead`, whose row lock makes appends to
one chain one at a time. Whoever administers the database can still switch
the triggers off and rewrite rows, but cannot compute a MAC without the key
(casino_office.chain_keys), so `manage.py verify_books` names the first
record that does not hold; the anchors kept outside the database catch a
chain cut short (machines.chains).
"""

from typing import ClassVar

from django.db import models
from django.utils.translation import gettext_lazy as _

# The MAC that the first record of a chain names as its predecessor.
GENESIS_MAC = "0" * 64


class ChainHead(models.Model):
    """Where one casino's chain of one journal ends: its last sequence number and MAC.

    A convenience for appending (and the row whose lock orders the appends),
    never trusted by verification, which recomputes every chain from its records.
    """

    casino = models.ForeignKey(
        "machines.Casino", on_delete=models.PROTECT, related_name="chain_heads", verbose_name=_("casino")
    )
    journal = models.CharField(max_length=40, verbose_name=_("journal"))
    sequence = models.BigIntegerField(default=0, verbose_name=_("sequence"))
    mac = models.CharField(max_length=64, default=GENESIS_MAC, verbose_name=_("MAC"))

    class Meta:
        verbose_name = _("chain head")
        verbose_name_plural = _("chain heads")
        ordering = ["casino", "journal"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "journal"], name="chainhead_one_per_casino_and_journal"),
            models.CheckConstraint(condition=models.Q(sequence__gte=0), name="chainhead_sequence_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.journal} of {self.casino_id}: {self.sequence}"


class Chained(models.Model):
    """A record of a chained journal. The concrete model declares:

    - `journal`: the journal's name (a chain per casino and journal);
    - `journal_casino`: the lookup from a record to its casino's id (e.g. "ticket__casino_id");
    - `journal_fields`: what the MAC covers: the record's own fields (by attname) and lookups through its
      foreign keys (e.g. "ticket__amount"), so that a row the record is about cannot change unseen either.
      Every concrete field is covered or named in `journal_exempt` (a test checks it), so a field added
      later never changes what an old record's MAC meant;
    - `journal_children`: the rows written with the record that are part of it (a transaction's legs), by
      their related name, with the fields covered (without the key to the record): the MAC covers them as a
      set, so none is added, removed, changed or moved to another record unseen.
    """

    chain = models.ForeignKey(
        ChainHead, on_delete=models.PROTECT, related_name="+", db_index=False, editable=False, verbose_name=_("chain")
    )
    chain_sequence = models.BigIntegerField(editable=False, verbose_name=_("chain sequence"))
    chain_key = models.CharField(max_length=8, editable=False, verbose_name=_("chain key id"))
    chain_mac = models.CharField(max_length=64, editable=False, verbose_name=_("chain MAC"))

    journal: ClassVar[str]
    journal_casino: ClassVar[str]
    journal_fields: ClassVar[tuple[str, ...]]
    journal_exempt: ClassVar[tuple[str, ...]] = ("id",)
    journal_children: ClassVar[dict[str, tuple[str, ...]]] = {}

    class Meta:
        abstract = True


def chain_link_unique(name: str) -> models.UniqueConstraint:
    """The constraint every journal declares: one record per place in its chain."""
    return models.UniqueConstraint(fields=["chain", "chain_sequence"], name=f"{name}_one_per_chain_link")


class BooksVerification(models.Model):
    """One run of the daily verification of a casino's books (machines.verification): what it found, where it ended.

    The next run walks each chain on from `ends` (records verified once are
    pinned by the anchors and by their successors' MACs); `manage.py
    verify_books` recomputes everything from the first record.
    """

    casino = models.ForeignKey(
        "machines.Casino", on_delete=models.PROTECT, related_name="books_verifications", verbose_name=_("casino")
    )
    started_at = models.DateTimeField(verbose_name=_("started at"))
    finished_at = models.DateTimeField(verbose_name=_("finished at"))
    # Each chain's end when the run started: {journal: [sequence, MAC]}.
    ends = models.JSONField(default=dict, verbose_name=_("chain ends"))
    records = models.BigIntegerField(default=0, verbose_name=_("records in the chains"))
    anchors = models.IntegerField(default=0, verbose_name=_("anchors checked"))
    finding = models.TextField(blank=True, verbose_name=_("first finding"))

    class Meta:
        verbose_name = _("books verification")
        verbose_name_plural = _("books verifications")
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["casino", "started_at"], name="booksverification_casino_idx")]

    def __str__(self) -> str:
        return f"{self.casino_id} {self.started_at:%Y-%m-%d %H:%M} {'intact' if self.intact else 'BROKEN'}"

    @property
    def intact(self) -> bool:
        return not self.finding
