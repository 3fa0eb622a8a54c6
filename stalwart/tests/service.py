"""A service whose tools honour idempotency keys, with failures scripted per send.

The tools module is written into each test's folder (see `write_service_project`), so
every test, and every process a test starts, imports its own copy. A send is scripted
by `PLAN[tool]` (in-process) or by files beside the module (across processes):

- "ok": the service does the call, once per key, and answers;
- "timeout": no answer, and the call never arrived (TimeoutError: in doubt);
- "lost": the call took effect and the answer was lost (TimeoutError: in doubt);
- "refused": ConnectionRefusedError (never arrived, not in doubt);
- "error": RuntimeError (not in doubt);
- "crash" / "crash_after": the process stops (a BaseException the engine does not
  catch) before / after the call took effect.

Files: `block-<tool>` makes a send touch `started-<tool>` and wait until the process is
killed; `hold-<tool>` makes a send touch `started-<tool>` and wait while `hold-<tool>`
exists, then go on (a worker that hangs, then wakes); `fail-<tool>` makes a send raise
RuntimeError. `ON_SEND` holds a test's hooks, each called with the tool's name inside
every send before the service acts (what happens elsewhere meanwhile: another worker
taking the session over). Every send appends
"<tool> <key> <try>" to `keys.log`; `APPLIED` maps each key the service acted on to
its answer, as a real idempotent service keeps it, and `DONE` lists each effect once.
"""

from __future__ import annotations

from pathlib import Path

from conftest import Project, write_project

SERVICE_TOOLS = '''
import time
from pathlib import Path

from stalwart import current_call, tool

HERE = Path(__file__).parent
CALLS = []  # (tool, key, try number) of every send, in order
PLAN = {}  # tool -> what its next sends do
APPLIED = {}  # key -> answer: what the service did, once per key
DONE = []  # (tool, key, answer) of every effect the service had, in order
KEY_PARAMS = []  # the idempotency_key parameter charge_card was given
FAIL = set()
ON_SEND = []  # a test's: called with the tool's name inside every send, before it acts


class SimulatedCrash(BaseException):
    """The process stops mid-call: nothing in the engine catches this."""


def _serve(name, answer):
    call = current_call()
    CALLS.append((name, call.key, call.try_number))
    with open(HERE / "keys.log", "a") as log:
        log.write(f"{name} {call.key} {call.try_number}\\n")
    if (HERE / f"block-{name}").exists():
        (HERE / f"started-{name}").touch()
        while True:  # the test kills this process here
            time.sleep(0.01)
    if (HERE / f"hold-{name}").exists():
        (HERE / f"started-{name}").touch()
        while (HERE / f"hold-{name}").exists():  # the test stops this process meanwhile
            time.sleep(0.01)
    if (HERE / f"fail-{name}").exists():
        raise RuntimeError(f"{name} is down")
    for hook in ON_SEND:
        hook(name)
    behaviour = PLAN[name].pop(0) if PLAN.get(name) else "ok"
    if behaviour == "timeout":
        raise TimeoutError(f"{name} timed out")
    if behaviour == "refused":
        raise ConnectionRefusedError(f"{name} refused the connection")
    if behaviour == "error":
        raise RuntimeError(f"{name} is down")
    if behaviour == "crash":
        raise SimulatedCrash(name)
    if call.key not in APPLIED:
        DONE.append((name, call.key, answer))
    done = APPLIED.setdefault(call.key, answer)
    if behaviour == "lost":
        raise TimeoutError(f"{name}: the answer was lost")
    if behaviour == "crash_after":
        raise SimulatedCrash(name)
    return done


@tool
def count_stock(order: int) -> dict:
    """Count the stock of an order."""
    return _serve("count_stock", {"order": order, "stock": 3})


@tool(writes=True, undo="refund_card")
def charge_card(order: int, idempotency_key: str) -> dict:
    """Charge the card for an order."""
    KEY_PARAMS.append(idempotency_key)
    return _serve("charge_card", {"order": order, "charge": "ch-" + idempotency_key[:8]})


@tool(writes=True, retry_safe=True)
def refund_card(order: int, charge: str) -> dict:
    """Refund a charge."""
    return _serve("refund_card", {"order": order, "refunded": charge})


@tool(writes=True, retry_safe=True, undo="free_slot")
def book_slot(order: int) -> dict:
    """Book a delivery slot for an order."""
    return _serve("book_slot", {"order": order, "slot": f"s-{order}"})


@tool(writes=True, retry_safe=True)
def free_slot(order: int, slot: str) -> dict:
    """Free a booked slot."""
    return _serve("free_slot", {"order": order, "freed": slot})


@tool(writes=True, irreversible=True)
def send_note(order: int) -> dict:
    """Send a note for an order."""
    return _serve("send_note", {"order": order, "sent": True})


@tool(writes=True)
def stamp_form(order: int) -> dict:
    """Stamp the form for an order."""
    return _serve("stamp_form", {"order": order, "stamped": True})
'''

SERVICE_TOOL_NAMES = [
    "count_stock",
    "charge_card",
    "refund_card",
    "book_slot",
    "free_slot",
    "send_note",
    "stamp_form",
]

CLAUSES = {
    "count_stock": "count the stock for order {}",
    "charge_card": "charge the card for order {}",
    "book_slot": "book a slot for order {}",
    "send_note": "send the note for order {}",
    "stamp_form": "stamp the form for order {}",
}


def write_service_project(folder: Path, **options: str) -> Project:
    return write_project(
        folder, tools_source=SERVICE_TOOLS, tool_names=SERVICE_TOOL_NAMES, **options
    )


def turn(*steps: tuple[str, int]) -> str:
    """A person's turn of these (tool, order) steps, in order."""
    return ", then ".join(CLAUSES[tool].format(order) for tool, order in steps)


def keys_log(folder: Path) -> list[tuple[str, str, int]]:
    """Every send the service saw, from any process: (tool, key, try number)."""
    path = folder / "keys.log"
    if not path.exists():
        return []
    lines = [line.split() for line in path.read_text().splitlines()]
    return [(name, key, int(tries)) for name, key, tries in lines]
