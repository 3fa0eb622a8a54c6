"""A YAML document that remembers where each value was written, and refuses duplicate keys.

PyYAML gives either plain values (`safe_load`) or nodes with their positions (`compose`);
a config error wants both: the value to check and the line and column to point at. So a
document is read both ways, once each, and a key path (`("agents", "desk", "tools", 3)`)
finds its node again. PyYAML keeps the last of two equal keys; a person meant one of them,
so a repeated key is an error here.
"""

from __future__ import annotations

from typing import Any

import yaml

from stalwart import texts
from stalwart.errors import ConfigError

Loc = tuple[str | int, ...]

# An agent.yaml is a page of settings: a few anchors at most. Past these, a document is an
# alias bomb ("billion laughs": 507 bytes that expand to 10^9 values), refused before
# anything walks or builds its expansion.
MAX_ALIASES = 50
MAX_EXPANDED_NODES = 100_000


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting aliases as it composes and refusing past the limit."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None, None, texts.yaml_too_many_aliases(MAX_ALIASES), event.start_mark
                )
        node: yaml.Node | None = super().compose_node(parent, index)
        return node


def _refuse_expansion(root: yaml.Node, file: str) -> None:
    """ConfigError if the document, its aliases expanded, has more than MAX_EXPANDED_NODES
    values; counted over the shared nodes once each, so the count itself is cheap."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        sizes[id(node)] = 1  # a recursive alias counts once, never loops
        children: list[yaml.Node] = []
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_EXPANDED_NODES:
                break
        sizes[id(node)] = total
        return total

    if size(root) > MAX_EXPANDED_NODES:
        mark = root.start_mark
        raise ConfigError(
            file, "", texts.yaml_too_large(MAX_EXPANDED_NODES), mark.line + 1, mark.column + 1
        )


def key_path(loc: Loc) -> str:
    """`agents.desk.tools[3]`: a location as a person reads it."""
    path = ""
    for step in loc:
        if isinstance(step, int):
            path += f"[{step}]"
        else:
            path += ("." if path else "") + str(step)
    return path


class YamlDocument:
    """One YAML file's text, its values and its nodes; errors name `file`."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.text = text
        self.root: yaml.Node | None = None

    def error(self, loc: Loc, expected: str, *, at_key: bool = False) -> ConfigError:
        """A ConfigError at `loc`: at its key with `at_key`, else at its value."""
        line, column = self.position(loc, at_key)
        return ConfigError(self.file, key_path(loc), expected, line, column)

    def parse(self) -> Any:
        """The document's values; ConfigError for invalid YAML or a key said twice."""
        try:
            loader = _BoundedLoader(self.text)
            try:
                self.root = loader.get_single_node()
                if self.root is not None:
                    _refuse_expansion(self.root, self.file)
                data = loader.construct_document(self.root) if self.root is not None else None
            finally:
                loader.dispose()
        except RecursionError:
            raise ConfigError(self.file, "", texts.yaml_too_deep()) from None
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            problem = getattr(error, "problem", None) or str(error)
            line = mark.line + 1 if mark is not None else None
            column = mark.column + 1 if mark is not None else None
            raise ConfigError(self.file, "", f"invalid YAML: {problem}", line, column) from error
        if self.root is not None:
            self._refuse_duplicate_keys(self.root, ())
        return data

    def _refuse_duplicate_keys(
        self, node: yaml.Node, loc: Loc, seen_nodes: set[int] | None = None
    ) -> None:
        # An alias shares its node: each node is walked once, however often it is named.
        seen_nodes = set() if seen_nodes is None else seen_nodes
        if id(node) in seen_nodes:
            return
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else str(key.value)
                if name in seen:
                    raise ConfigError(
                        self.file, key_path((*loc, name)), "this key appears twice",
                        key.start_mark.line + 1, key.start_mark.column + 1,
                    )  # fmt: skip
                seen.add(name)
                self._refuse_duplicate_keys(value, (*loc, name), seen_nodes)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._refuse_duplicate_keys(item, (*loc, index), seen_nodes)

    def position(self, loc: Loc, at_key: bool) -> tuple[int | None, int | None]:
        """The line and column (from 1) of `loc`'s value (or key), as far as it is found."""
        node = self.root
        mark = node.start_mark if node is not None else None
        for step in loc:
            if isinstance(node, yaml.MappingNode):
                pair = next(
                    ((k, v) for k, v in node.value if getattr(k, "value", None) == step), None
                )
                if pair is None:
                    break
                mark = pair[0].start_mark if at_key and step == loc[-1] else pair[1].start_mark
                node = pair[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
                if step >= len(node.value):
                    break
                node = node.value[step]
                mark = node.start_mark
            else:
                break
        if mark is None:
            return None, None
        return mark.line + 1, mark.column + 1
