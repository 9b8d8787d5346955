"""The machine API's benchmark sends new requests in every phase (bench/api_load.py)."""

import argparse

from bench.api_load import machine_request, phase_plan


def test_every_phase_of_a_run_sends_request_ids_of_its_own():
    """Each round's life cycles were the first round's again (the same ids), answered as replays: measured, the
    replay path instead of the life cycle. Every phase's ids are now its own."""
    args = argparse.Namespace(paced_only=False, rounds=3, rate=330.0)
    plan = phase_plan(args)
    assert [kind for kind, _tag, _rate in plan] == ["cycle", "floor"] * 4
    keys = [f"demo-key-{n:04d}" for n in range(1, 65)]
    seen: dict[str, int] = {}
    cycles = [(phase, tag) for phase, (kind, tag, _rate) in enumerate(plan) if kind == "cycle"]
    for phase, tag in cycles:
        for key in keys:
            for n in range(1, 200):
                request = machine_request(tag, key, n)
                first = seen.setdefault(request, phase)
                assert first == phase, f"{request} is sent in phases {first} and {phase}"
    assert len(seen) == len(cycles) * len(keys) * 199
