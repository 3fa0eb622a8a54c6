"""An agent that reads Portuguese (issue 29, point 4), on the page: a Portuguese turn
reaches a tool by a declared Portuguese phrase, whose role words ("de", "para") bind its
arguments; a Portuguese turn refused shows how it is read, as `stalwart explain` does."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from stalwart.serve import Service, create_app
from stalwart.serve.views import snapshot
from stalwart.texts import serve as serve_texts

from .serve_support import OPERATOR_ENV, OPERATOR_TOKEN, InstantClock, write_desk
from .test_serve_pages import csrf_of, login_form

pytestmark = pytest.mark.integration

REMESSA = '''

@tool(writes=True, retry_safe=True, phrases=["remeter {valor} de {pagador} para {recebedor}"])
def enviar_remessa(pagador: str, recebedor: str, valor: float) -> dict[str, object]:
    """Envia uma remessa entre duas pessoas."""
    return {"pagador": pagador, "recebedor": recebedor, "valor": valor}
'''


@pytest.fixture
def bilingual(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv(OPERATOR_ENV, OPERATOR_TOKEN)
    desk = write_desk(tmp_path / "desk", more_source=REMESSA, more_tools=", enviar_remessa")
    text = desk.yaml.read_text()
    desk.yaml.write_text(
        text.replace(
            "on_unread: refuse\n", "on_unread: refuse\n    languages: [english, portuguese]\n"
        )
    )
    service = Service(desk.config(), clock=InstantClock(), secret=b"test-secret", run_threads=2)
    with TestClient(create_app(service)) as client:
        client.service = service  # type: ignore[attr-defined]
        yield client


def test_a_portuguese_phrase_reaches_its_tool_on_the_page(bilingual: TestClient) -> None:
    login_form(bilingual, "alice")
    csrf = csrf_of(bilingual.get("/s/alice~s-pt").text)
    turn = "remeter R$ 25,00 de ana para bia"
    bilingual.post("/s/alice~s-pt/turn", data={"csrf": csrf, "text": turn})
    page = html.unescape(bilingual.get("/s/alice~s-pt").text)
    assert 'enviar_remessa(pagador="ana", recebedor="bia", valor=25.0)' in page, page
    assert serve_texts.HOW_READ not in page


def test_a_refused_portuguese_turn_shows_how_it_is_read(bilingual: TestClient) -> None:
    login_form(bilingual, "alice")
    csrf = csrf_of(bilingual.get("/s/alice~s-nao").text)
    turn = "remeter 25,00 de ana para bia, mas não remeter 5,00 de bia para ana"
    bilingual.post("/s/alice~s-nao/turn", data={"csrf": csrf, "text": turn})
    page = html.unescape(bilingual.get("/s/alice~s-nao").text)
    service: Service = bilingual.service  # type: ignore[attr-defined]
    shown = service.agent.explain(turn).clause_lines()
    assert shown == [
        '1. "remeter 25,00 de ana para bia" reads as enviar_remessa',
        '   pagador = ana, from "de ana" (by name)',
        '   recebedor = bia, from "para bia" (by name)',
        '   valor = 25.0, from "25,00" (by type)',
        '2. "não remeter 5,00 de bia para ana" is not read: it says not to: "não"',
    ]
    assert f"<summary>{serve_texts.HOW_READ}</summary><pre>" + "\n".join(shown) in page
    (read,) = snapshot(service.agent, "alice~s-nao", "alice").turns
    assert read.reading == tuple(shown)
