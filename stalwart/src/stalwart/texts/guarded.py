"""The texts of guarded runs (stalwart.guarded) and of the framework adapters
(stalwart.adapters): what a guarded run refuses, and the set-ups an adapter refuses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .questions import call_text

# --- guarded runs (stalwart.guarded) ---

GUARDED_RUN_THREAD = (
    "a guarded run is used on the thread that opened it (its lease on the session is that thread's)"
)
GUARDED_RUN_CLOSED = "this guarded run was closed; open the session again"


def no_guarded_run(session: str) -> str:
    return f"session {session!r} has no guarded run to go on with: begin one first"


def guarded_run_left(session: str, run: str) -> str:
    return (
        f"run {run} of session {session!r} was left mid-way by its framework: take it up "
        "again (resume it) before a new turn"
    )


# Logged when an application's driver, taking up an answered run, raised (session, run).
ANSWERED_RUN_FAILED = "taking up answered run of session %s (run %s) failed"


def framework_goes_on(framework: str) -> str:
    """`stalwart resume` and `stalwart chat`, for a guarded run that waits for its framework:
    stalwart does not drive it, its application does."""
    return (
        f"a run of {framework}: its application goes on with it (the adapter's driver: resume, "
        "or serve_answers)"
    )


def framework_still_running(framework: str, seconds: float) -> str:
    """`stalwart chat`, when the framework's application did not go on within its wait."""
    return (
        f"the {framework} run has not moved on in {seconds:g} s: is its application's "
        "serve_answers running? Its next question waits in the record; `stalwart chat` shows "
        "it when started again"
    )


def guarded_not_sendable(run: str, step: int, state: str) -> str:
    return f"step {step} of run {run} is not the one to send now (the run is {state})"


def guarded_not_finished(run: str, state: str) -> str:
    return f"run {run} cannot end with its framework's last word now (it is {state})"


def call_changed(call_id: str, step: int, recorded: str, tool: str, args: Mapping[str, Any]) -> str:
    return (
        f"call {call_id!r} came back as {tool}, with other arguments than step {step} was "
        f"recorded with ({call_text(recorded, args)}): nothing was sent; an approval sends "
        "exactly the arguments a person was shown"
    )


def sent_only_by_framework(tool: str, framework: str) -> str:
    return (
        f"{tool} is a {framework} tool agent.yaml does not declare: only {framework} can "
        "send it, through its guard"
    )


# --- the Pydantic AI adapter (stalwart.adapters.pydantic_ai) ---

PYDANTIC_AI_MISSING = (
    "stalwart's Pydantic AI adapter needs pydantic-ai-slim: pip install 'stalwart[pydantic-ai]'"
)
GUARD_WITHOUT_DRIVER = (
    "this agent is guarded by stalwart (StalwartGuard): run it through its StalwartDriver, "
    "never with agent.run alone, whose approvals no person gave; nothing was sent"
)
NO_GUARD = (
    "this agent has no StalwartGuard among its capabilities: add "
    "capabilities=[StalwartGuard(desk)] when you build it"
)
DRIVER_SYNC_IN_LOOP = (
    "the driver's *_sync methods run their own event loop, and one runs here already: await "
    "run, answer, confirm or resume instead"
)


def write_timeout_refused(tool: str, timeout: float) -> str:
    return (
        f"{tool} is a write, and Pydantic AI would time it out after {timeout:g}s: a timed-out "
        "call becomes a retry prompt, so the model would send the write again, though it may "
        "have taken effect. Take the timeout off (Tool(timeout=), Agent(tool_timeout=)); "
        "stalwart's own (timeout: under the tool in agent.yaml) makes a late write a question "
        "for a person"
    )


def requires_approval_refused(tool: str) -> str:
    return (
        f"{tool} is declared with Pydantic AI's requires_approval=True, yet agent.yaml has no "
        "person confirm it (a read, or confirm: never): its approval would be Pydantic AI's "
        "flag, with no person's answer. Declare it a write in agent.yaml (a person confirms "
        "each call), or drop requires_approval"
    )


def durable_refused(name: str) -> str:
    return (
        f"{name} runs the agent under a durable engine, which re-runs a tool call left in "
        "flight with no idempotency key, retries it on its own, and runs the hooks where the "
        "record cannot be written: stalwart does not guard writes under it (yet)"
    )


def inline_approvals_refused(name: str) -> str:
    return (
        f"{name} answers deferred tool calls inside the run: it approves with no person's "
        "bound answer, and may approve with ToolApproved(override_args=...), sending "
        "arguments nobody was shown. Remove it: stalwart asks the person"
    )


def external_calls_refused(tools: list[str]) -> str:
    return (
        f"{', '.join(tools)} deferred their calls to be run outside the agent "
        "(CallDeferred): stalwart cannot key, record or undo what runs outside it"
    )


def unsafe_setups(found: list[str]) -> str:
    return "this set-up would break stalwart's guarantees, so it is refused: " + "; ".join(found)


def driver_rounds(rounds: int) -> str:
    return (
        f"the run was taken up {rounds} times without waiting for a person or ending: a call "
        "the guard defers keeps coming back"
    )


# --- the LangGraph adapter (stalwart.adapters.langgraph) ---

LANGGRAPH_MISSING = (
    "stalwart's LangGraph adapter needs langchain and langgraph: pip install 'stalwart[langgraph]'"
)
MIDDLEWARE_WITHOUT_DRIVER = (
    "this agent is guarded by stalwart (StalwartMiddleware): run it through its StalwartDriver, "
    "never with graph.invoke or Command(resume=...) alone, whose approvals no person gave; "
    "nothing was sent"
)
NO_MIDDLEWARE = (
    "this graph's tools are not guarded by a StalwartMiddleware: give create_agent "
    "middleware=[..., StalwartMiddleware(desk)] (last: innermost), or a ToolNode "
    "wrap_tool_call=guard.wrap_tool_call"
)
LANGGRAPH_NO_CHECKPOINTER = (
    "the graph has no checkpointer: a person's question is a LangGraph interrupt, which needs "
    "one, and a run whose process stops could not be taken up. Give create_agent a durable "
    "checkpointer (SqliteSaver, PostgresSaver)"
)


def checkpointer_refused(name: str) -> str:
    return (
        f"the graph's checkpointer, {name}, keeps its checkpoints in this process's memory: a "
        "run whose process stops could not be taken up on any worker, and its calls would be "
        "asked of the model again under new ids. Use a durable one (SqliteSaver, PostgresSaver); "
        "the driver writes every checkpoint before the next step (durability='sync')"
    )


def tool_errors_refused(node: str, handling: str) -> str:
    return (
        f"ToolNode {node!r} handles tool errors as {handling}: a write's failure (or the guard's "
        "own stop) would become text for the model, so the run would go on and nothing would be "
        "undone. Keep the default handle_tool_errors (or False)"
    )


def retry_policy_refused(node: str, tools: list[str]) -> str:
    return (
        f"node {node!r} has a RetryPolicy, and {', '.join(tools)} is a write that is not "
        "retry-safe: LangGraph would run it again after a failure that may have taken effect. "
        "Take the policy off the tools node: stalwart retries reads and retry-safe writes "
        "itself, under one key, and asks a person about the others"
    )


def tool_retry_refused(tools: list[str]) -> str:
    return (
        f"ToolRetryMiddleware retries {', '.join(tools)}, a write that is not retry-safe, and "
        "turns a failure it gives up on into text for the model, so the run would go on and "
        "nothing would be undone. Remove it (or limit its tools= to reads): stalwart retries "
        "reads and retry-safe writes itself, under one key"
    )


def tool_retry_as_text_refused(tools: list[str]) -> str:
    return (
        f"ToolRetryMiddleware turns a failure of {', '.join(tools)} it gives up on into text "
        "for the model, and stalwart's own stop of a failed run with it, so the graph would go "
        "on after its run was rolled back. Give it on_failure='error', or remove it: stalwart "
        "retries reads and retry-safe writes itself"
    )


def guard_not_innermost(outer: list[str]) -> str:
    return (
        f"{', '.join(outer)} wraps tool calls inside StalwartMiddleware: what it does to a call "
        "would not go through the record. Put StalwartMiddleware last in middleware=[...] "
        "(innermost)"
    )


def hitl_edit_refused(tools: list[str]) -> str:
    return (
        f"HumanInTheLoopMiddleware lets a reviewer edit {', '.join(tools)}: an edited call "
        "changes its name and arguments after the person approved what stalwart showed, with no "
        "one's bound answer. Remove it (stalwart asks the person), or allow only approve and "
        "reject"
    )


def durability_refused(durability: str) -> str:
    return (
        f"durability={durability!r} may lose the checkpoint written before a write is sent, so "
        "a run taken up after a crash could ask the model again and send the write under a new "
        "call id; guarded writes run with durability='sync'"
    )


# --- the OpenAI Agents SDK adapter (stalwart.adapters.openai_agents) ---

OPENAI_AGENTS_MISSING = (
    "stalwart's OpenAI Agents SDK adapter needs openai-agents: "
    "pip install 'stalwart[openai-agents]'"
)
AGENTS_WITHOUT_DRIVER = (
    "this agent's tools are guarded by stalwart (StalwartTools): run it through its "
    "StalwartDriver, never with Runner.run alone, whose approvals (RunState.approve) no person "
    "gave; nothing was sent"
)


def unguarded_tool_refused(tool: str) -> str:
    return (
        f"{tool} is a function tool stalwart's factory did not build: its failures and timeouts "
        "would reach the model as text, and nothing would key, record or undo it. Build it with "
        "StalwartTools(desk).tool(function)"
    )


def hosted_tool_refused(kind: str) -> str:
    return (
        f"{kind} runs on OpenAI's side (or the SDK's), where stalwart cannot key, record or undo "
        "it, beside writes stalwart guards: a failed run could not undo what it did. Remove it "
        "from a guarded agent"
    )


def mcp_servers_refused(names: list[str]) -> str:
    return (
        f"the agent's MCP servers ({', '.join(names)}) give it tools the SDK builds, which "
        "stalwart's factory cannot guard. Serve them through agent.yaml's mcp: tool sources "
        "instead"
    )
