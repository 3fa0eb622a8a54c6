"""Chapter 34's failed order: two runs of the shop's desk, each undone last write first.

Run it from this folder: `python run.py` (or `make demo` from the repository's root).
"""

from shop.tools import CALLS

from stalwart import Agent, Reply

desk = Agent.from_file("agent.yaml")


def order(turn: str, user: str) -> Reply:
    reply = desk.chat(turn, user=user)
    while reply.waiting and reply.waiting[0].kind == "confirm":
        # The person approves each write as it comes; the answer names the question it answers.
        reply = desk.confirm(user, "approve", question=reply.waiting[0])
    return reply


reply = order(
    "charge order 4411 40.00, then update the crm for order 4411, "
    "then provision the account for order 4411",
    "u-17",
)
print(reply.text)
print("The tools ran in this order:")
for number, name in enumerate(CALLS, 1):
    print(f"{number}. {name}")

CALLS.clear()
reply = order(
    "charge order 4411 40.00, then send the receipt for order 4411, "
    "then provision the account for order 4411",
    "u-18",
)
print(reply.text)
