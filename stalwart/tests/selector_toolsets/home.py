"""A house's thermostat and lights: floats, a yes/no, and a key the runtime fills."""

from __future__ import annotations

from stalwart.tools import tool


@tool(writes=True, retry_safe=True)
def set_temperature(room: str, degrees: float, eco: bool = False) -> dict[str, object]:
    """Set the thermostat of a room to a temperature."""
    return {"room": room, "degrees": degrees, "eco": eco}


@tool
def read_temperature(room: str) -> float:
    """Read the temperature a room's thermostat measures."""
    return 20.5


@tool(writes=True, retry_safe=True)
def dim_lights(room: str, percent: int, idempotency_key: str | None = None) -> dict[str, object]:
    """Dim the lights of a room to a percentage of their brightness."""
    return {"room": room, "percent": percent, "key": idempotency_key}
