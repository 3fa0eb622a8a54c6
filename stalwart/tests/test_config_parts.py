"""The config's three parts on their own: YAML with positions, tool sources, the loader."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stalwart.config.yamldoc import YamlDocument, key_path
from stalwart.errors import ConfigError, ToolSourceError
from stalwart.tools.sources import python_source, unload_python_sources

pytestmark = pytest.mark.unit


def test_a_yaml_document_points_at_a_value_and_refuses_a_key_said_twice() -> None:
    document = YamlDocument("a.yaml", "agents:\n  desk:\n    tools: [a, b]\n")
    assert document.parse() == {"agents": {"desk": {"tools": ["a", "b"]}}}
    error = document.error(("agents", "desk", "tools", 1), "expected a tool")
    assert str(error) == "a.yaml:3:16: agents.desk.tools[1]: expected a tool"
    assert key_path(("tools", 3, "python")) == "tools[3].python"
    with pytest.raises(ConfigError) as twice:
        YamlDocument("b.yaml", "a: 1\nb:\n  c: 1\n  c: 2\n").parse()
    assert str(twice.value) == "b.yaml:4:3: b.c: this key appears twice"


def test_a_python_source_gives_its_tools_and_is_unloaded(tmp_path: Path) -> None:
    (tmp_path / "parts_tools_x.py").write_text(
        "from stalwart import tool\n\n@tool\ndef look(order: int) -> int:\n"
        '    """Look."""\n    return order\n'
    )
    (tmp_path / "parts_empty_x.py").write_text("X = 1\n")
    try:
        assert list(python_source(tmp_path, "parts_tools_x")) == ["look"]
        with pytest.raises(ToolSourceError, match="defines no @tool functions"):
            python_source(tmp_path, "parts_empty_x")
        with pytest.raises(ToolSourceError, match="failed to import: ModuleNotFoundError"):
            python_source(tmp_path, "parts_missing_x")
    finally:
        unload_python_sources(tmp_path, ["parts_tools_x", "parts_empty_x"])
    assert "parts_tools_x" not in sys.modules
    assert str(tmp_path) not in sys.path
