"""A clinic's front desk: appointments and their cancelling, prescriptions, test results
and reminders. Nothing to do with money, orders or rooms."""

from __future__ import annotations

from stalwart.tools import tool


@tool
def check_schedule(doctor: str) -> list[str]:
    """List the free times in a doctor's schedule."""
    return [f"{doctor}: 09:00"]


@tool(writes=True, undo="cancel_appointment")
def book_appointment(patient: int, doctor: str, day: str) -> dict[str, object]:
    """Book an appointment for a patient with a doctor on a day."""
    return {"appointment": f"A-{patient}", "doctor": doctor, "day": day}


@tool(writes=True, retry_safe=True)
def cancel_appointment(appointment: str) -> dict[str, object]:
    """Cancel an appointment."""
    return {"appointment": appointment, "cancelled": True}


@tool(writes=True, irreversible=True)
def refill_prescription(prescription: int, days: int = 30) -> dict[str, object]:
    """Send a refill of a prescription to the pharmacy."""
    return {"prescription": prescription, "days": days}


@tool(writes=True, irreversible=True)
def send_results(patient: int) -> dict[str, object]:
    """Send a patient their lab results by e-mail."""
    return {"patient": patient, "sent": True}


@tool(writes=True, retry_safe=True)
def remind_patient(patient: int, urgent: bool = False) -> dict[str, object]:
    """Text a patient a reminder of their next appointment."""
    return {"patient": patient, "urgent": urgent}
