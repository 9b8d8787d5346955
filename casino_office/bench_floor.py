"""The benchmark's floor: a bare DRF endpoint doing work comparable to one ticket transition, with raw SQL.

A JSON body is parsed (the API's own parser and renderer, from REST_FRAMEWORK's defaults) and checked; one
transaction updates a row by its primary key (as a transition updates its ticket) and inserts one (as it
records its event); the answer is JSON. No authentication, no idempotency, no ORM: what any request costs
on this server, whatever the contract adds. It is served under /api/, so it meets the middleware a machine's
request meets (not the staff's: staff.middleware.StaffOnlyMiddleware).

Served only when BENCH_FLOOR_ENDPOINT=1 (bench/api_load.py sets it and creates the two tables); never in
production.
"""

from decimal import Decimal, InvalidOperation

from django.db import connection, transaction
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


def _invalid(detail: str) -> Response:
    return Response({"code": "invalid_request", "detail": detail}, status=422)


class FloorView(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    def post(self, request: Request) -> Response:
        body = request.data
        if not isinstance(body, dict):
            return _invalid("The body must be a JSON object.")
        request_id, slot = body.get("request_id"), body.get("slot")
        if not isinstance(request_id, str) or not 1 <= len(request_id) <= 64:
            return _invalid("'request_id' must be a string of 1-64 characters.")
        if not isinstance(slot, int) or isinstance(slot, bool) or not 1 <= slot < 2**31:
            return _invalid("'slot' must be a positive integer.")
        try:
            amount = Decimal(str(body.get("amount")))
        except InvalidOperation:
            return _invalid("'amount' must be a decimal string.")
        if not amount.is_finite() or not Decimal("0") < amount < Decimal("100000"):
            return _invalid("'amount' must be between 0 and 100000.")
        connection.health_check_done = True  # type: ignore[attr-defined]  # as tickets.api.scaffold.MachineAPIView does
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "UPDATE bench_floor_slot SET amount = amount + %s, updated_at = now() WHERE id = %s",
                [amount, slot],
            )
            if cursor.rowcount != 1:
                return Response({"code": "not_found", "detail": "No such slot."}, status=404)
            cursor.execute(
                "INSERT INTO bench_floor (slot_id, request_id, amount, created_at) VALUES (%s, %s, %s, now()) "
                "RETURNING id",
                [slot, request_id, amount],
            )
            (row_id,) = cursor.fetchone() or (0,)
        return Response({"id": row_id, "request_id": request_id, "amount": f"{amount:.2f}"}, status=201)
