"""The benchmark's floor: a bare DRF endpoint doing one comparable insert with raw SQL.

Served only when BENCH_FLOOR_ENDPOINT=1 (bench/api_load.py sets it); never in production.
"""

from django.db import connection
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class FloorView(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    def post(self, request: Request) -> Response:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO bench_floor (note, created_at) VALUES (%s, now()) RETURNING id", ["floor"])
            (row_id,) = cursor.fetchone() or (0,)
        return Response({"id": row_id}, status=201)
