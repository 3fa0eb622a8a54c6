"""A hotel's front desk: strings, integers, an optional argument, a two-word parameter."""

from __future__ import annotations

from stalwart.tools import tool


@tool(writes=True, undo="cancel_booking")
def book_room(hotel: str, nights: int, check_in: str, guests: int = 1) -> dict[str, object]:
    """Book a room at a hotel for some nights."""
    return {"booking": f"{hotel}-{check_in}", "nights": nights, "guests": guests}


@tool(writes=True, retry_safe=True)
def cancel_booking(booking: str) -> dict[str, object]:
    """Cancel a booking."""
    return {"booking": booking, "cancelled": True}


@tool(writes=True, irreversible=True)
def extend_stay(booking: str, nights: int) -> dict[str, object]:
    """Add nights to the stay a booking holds."""
    return {"booking": booking, "nights": nights}


@tool
def list_rooms(hotel: str) -> list[str]:
    """List the free rooms of a hotel."""
    return [f"{hotel}-1"]
