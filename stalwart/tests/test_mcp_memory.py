"""The reference knowledge-graph server from npm (`@modelcontextprotocol/server-memory`),
run with node over stdio under stalwart: `create_entities` undone by `delete_entities`
in the chapter's rollback. The model is stalwart's scripted adapter."""

from __future__ import annotations

import json
from pathlib import Path

from npm_tools import find_cli, unavailable

from stalwart import Agent, FakeClock
from stalwart.models import AssistantMessage, Model, ScriptedAdapter, ToolCall
from stalwart.models.scripted import ScriptStep

ENTITY = {"name": "order-4411", "entityType": "order", "observations": ["charged 40.00"]}


def test_create_entities_is_undone_by_delete_entities_when_a_later_write_fails(
    tmp_path: Path,
) -> None:
    cli = find_cli("mcp-server-memory")
    if isinstance(cli, str):
        unavailable(cli)
        return
    assert cli.version == "2026.8.31"  # checked against
    memory = tmp_path / "memory.jsonl"
    (tmp_path / "agent.yaml").write_text(
        "agents:\n"
        "  desk:\n"
        '    model: "scripted:desk"\n'
        "    tools: [kg_create_entities, kg_delete_entities, kg_delete_observations]\n"
        "    on_unread: model\n"
        "tools:\n"
        f"  - mcp: {{command: [{cli.path}], env: {{MEMORY_FILE_PATH: {memory}}}, prefix: kg_}}\n"
        "  - kg_create_entities:\n"
        '      undo: {tool: kg_delete_entities, args: {entityNames: "$args.entities[*].name"}}\n'
        "record: record.sqlite\n"
    )
    script: list[ScriptStep] = [
        AssistantMessage(tool_calls=(
            ToolCall(id="c1", name="kg_create_entities", arguments={"entities": [ENTITY]}),
        )),
        AssistantMessage(tool_calls=(
            ToolCall(id="c2", name="kg_delete_observations", arguments={
                "deletions": [{"entityName": "nobody", "observations": ["x"]}]}),
        )),
    ]  # fmt: skip
    model = Model("scripted:desk", ScriptedAdapter(script, selector="scripted:desk"),
                  clock=FakeClock())  # fmt: skip
    desk = Agent.from_file(tmp_path / "agent.yaml", clock=FakeClock(), model=model)
    try:
        reply = desk.chat("remember that order 4411 was charged", user="u")
        while reply.waiting and reply.waiting[0].kind == "confirm":
            reply = desk.confirm_current("u", "approve")
        names = [(c.tool, c.status) for c in desk.record("u")]
    finally:
        desk.close()
    assert reply.text is not None and reply.state == "rolled_back"  # the model fails next
    assert "Undone, latest first: kg_create_entities (by kg_delete_entities)." in reply.text
    assert names[0][0] == "kg_create_entities"
    graph = [json.loads(line) for line in memory.read_text().splitlines() if line.strip()]
    assert [item for item in graph if item.get("name") == "order-4411"] == []
