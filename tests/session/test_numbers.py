"""Numbers are written exactly as JavaScript's ``JSON.stringify`` writes them."""

from __future__ import annotations

import json
import random
import struct
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_agent.session._codec import js_number, serialize
from tests.helpers.pi import node_executable


def _random_floats(count: int) -> list[float]:
    rng = random.Random(7)
    values = [0.1, 1e-7, 3e-05, 1e16, 1e21, 1e-6, 5e-324, 1.7976931348623157e308, 123.456]
    while len(values) < count:
        bits = rng.getrandbits(64)
        value = struct.unpack("<d", bits.to_bytes(8, "little"))[0]
        if value == value and abs(value) != float("inf"):
            values.append(value)
        values.append(rng.uniform(-1e6, 1e6))
        values.append(round(rng.uniform(0, 1), rng.randint(1, 12)))
    return values[:count]


@pytest.mark.slow
def test_matches_node_number_to_string() -> None:
    node = node_executable()
    values = _random_floats(3000)
    script = "const v=JSON.parse(require('fs').readFileSync(0,'utf8'));"
    script += "process.stdout.write(JSON.stringify(v.map(String)))"
    done = subprocess.run(
        [node, "-e", script],
        input=json.dumps(values),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    expected = json.loads(done.stdout)
    mismatches = [
        (v, js_number(v), e) for v, e in zip(values, expected, strict=True) if js_number(v) != e
    ]
    assert mismatches == []


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_number_round_trips(value: float) -> None:
    assert float(js_number(value)) == value or value == 0


def test_serialize_uses_js_layout_everywhere() -> None:
    line = serialize({"a": 1e-7, "b": [1.0, 2.5], "c": {"d": -0.0, "e": 1e16}, "t": "ü"})
    assert line == '{"a":1e-7,"b":[1,2.5],"c":{"d":0,"e":10000000000000000},"t":"ü"}'.encode()
