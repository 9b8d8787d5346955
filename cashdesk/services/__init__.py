"""Every write of the cash desk. Views, admin actions and tasks call these; nothing else writes."""

from cashdesk.books import shift_balances, vault_balance
from cashdesk.services.count_requests import count_request_approve, count_request_reject
from cashdesk.services.exchange import (
    chips_buy,
    chips_cashout,
    smartcard_load,
    smartcard_payout,
    tokens_buy,
    tokens_cashout,
)
from cashdesk.services.machine_receipts import (
    machine_receipt_pay,
    machine_receipt_record,
    machine_receipt_supervisor_confirm,
    machine_receipt_unlock,
)
from cashdesk.services.shifts import (
    count_amounts,
    handover_take_over,
    shift_close,
    shift_handover,
    shift_open,
    vault_count,
)
from cashdesk.services.supervision import (
    REVERSIBLE_KINDS,
    reversal_approve,
    reversal_request,
    transfer_approve,
    transfer_request,
)
from cashdesk.services.tickets import (
    hold_decide,
    holds_mark_overdue,
    ticket_hold,
    ticket_payout,
    ticket_present,
    ticket_resolve_stuck,
    ticket_sell,
    ticket_void,
    voucher_print,
    voucher_reprint,
)

__all__ = [
    "REVERSIBLE_KINDS",
    "chips_buy",
    "chips_cashout",
    "count_amounts",
    "count_request_approve",
    "count_request_reject",
    "handover_take_over",
    "hold_decide",
    "holds_mark_overdue",
    "machine_receipt_pay",
    "machine_receipt_record",
    "machine_receipt_supervisor_confirm",
    "machine_receipt_unlock",
    "reversal_approve",
    "reversal_request",
    "shift_balances",
    "shift_close",
    "shift_handover",
    "shift_open",
    "smartcard_load",
    "smartcard_payout",
    "ticket_hold",
    "ticket_payout",
    "ticket_present",
    "ticket_resolve_stuck",
    "ticket_sell",
    "ticket_void",
    "tokens_buy",
    "tokens_cashout",
    "transfer_approve",
    "transfer_request",
    "vault_balance",
    "vault_count",
    "voucher_print",
    "voucher_reprint",
]
