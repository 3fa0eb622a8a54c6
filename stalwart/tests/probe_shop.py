"""A payment desk whose write declares a probe, for the probe's tests (test_probe*.py).

The tools module is written into each test's folder, so every process a test starts
imports its own copy. What the payment service did is kept in `charges.json` beside it
(so a process killed mid-call leaves it for the next), and every asking of the probe is
a line of `probes.log`. Behaviour is scripted by files beside the module:

- `lose-charge_card`: the charge takes effect and its answer is lost (TimeoutError: in
  doubt); `drop-charge_card`: the charge times out before it arrives (in doubt, nothing
  charged); `fail-charge_card`: RuntimeError (not in doubt);
- `fail-get_charge`: the probe raises; `hang-get_charge`: it outlasts its timeout
  (0.5 s); `block-get_charge`: it touches `started-get_charge` and waits to be killed.
"""

from __future__ import annotations

from pathlib import Path

from conftest import Project, write_project

PROBE_TOOLS = '''
import json
import time
from pathlib import Path

from stalwart import tool

HERE = Path(__file__).parent


def _charges():
    path = HERE / "charges.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _flag(name):
    return (HERE / name).exists()


@tool(writes=True, undo="refund_card")
def charge_card(order: int, idempotency_key: str) -> dict:
    """Charge the card for an order."""
    if _flag("fail-charge_card"):
        raise RuntimeError("the card was declined")
    if _flag("drop-charge_card"):
        raise TimeoutError("charge_card timed out")
    charges = _charges()
    if idempotency_key not in charges:
        charges[idempotency_key] = {"charge": f"ch_{19 + len(charges)}", "order": order}
        (HERE / "charges.json").write_text(json.dumps(charges))
    if _flag("lose-charge_card"):
        raise TimeoutError("charge_card: the answer was lost")
    return charges[idempotency_key]


@tool(writes=True, retry_safe=True)
def refund_card(order: int, charge: str) -> dict:
    """Refund a charge."""
    return {"order": order, "refunded": charge}


@tool(timeout=0.5)
def get_charge(order: int, key: str) -> dict | None:
    """Look up the charge of an order made under a key."""
    with open(HERE / "probes.log", "a") as log:
        log.write(f"{order} {key}\\n")
    if _flag("block-get_charge"):
        (HERE / "started-get_charge").touch()
        while True:  # the test kills this process here
            time.sleep(0.01)
    if _flag("fail-get_charge"):
        raise RuntimeError("the ledger service is down")
    if _flag("hang-get_charge"):
        time.sleep(3)
    found = _charges().get(key)
    return {"charge": found["charge"]} if found is not None else None
'''

PROBE_TOOL_NAMES = ["charge_card", "refund_card", "get_charge"]

PROBE_FACTS = (
    "  - charge_card:\n      probe: {tool: get_charge, args: {order: $args.order, key: $key}}\n"
)

TURN = "charge the card for order 4411"


def write_probe_project(folder: Path, *, facts: str = PROBE_FACTS, **options: str) -> Project:
    return write_project(
        folder, tools_source=PROBE_TOOLS, tool_names=PROBE_TOOL_NAMES, facts=facts, **options
    )


def probes_asked(folder: Path) -> list[str]:
    """Every asking of the probe, from any process: "<order> <key>"."""
    path = folder / "probes.log"
    return path.read_text().splitlines() if path.exists() else []
