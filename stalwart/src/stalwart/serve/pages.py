"""The pages: server-rendered (Jinja2), live through server-sent events of rendered HTML.

Every form works without JavaScript (a POST, then a redirect once the run stops); with
it, `static/app.js` sends the form with fetch so the page stays live while a run thread
works, and the event streams replace the panel as the record moves.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape
from starlette.concurrency import run_in_threadpool

from .. import texts as run_texts
from ..errors import NotSignedIn
from ..labels import shown_args, shown_call
from ..replies import Reply
from ..texts import serve as texts
from .auth import OPERATOR_COOKIE, USER_COOKIE, CookieLogin
from .views import KINDS, STATES, Snapshot, inbox_items, sessions_of
from .web import (
    check_csrf,
    check_operator_csrf,
    csrf_token,
    finished,
    operator_csrf,
    operator_nonce,
    require_operator,
    require_user,
    service,
    user_of,
    wants_json,
)

templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))


def when(moment: float | None, *, relative: bool = False, short: bool = False) -> Markup:
    """A time of the record as every page shows it: `<time datetime=ISO>` (with its offset),
    its text in UTC until `static/app.js` writes it in the viewer's zone (and, `relative`,
    as "3 min ago", or `short`, as "Dec 3, 17:33:27", the full time in its title)."""
    if moment is None:
        return Markup("")
    at = datetime.datetime.fromtimestamp(moment, tz=datetime.UTC)
    shown = texts.shown_time(at.strftime("%Y-%m-%d %H:%M:%S"))
    kind = ' data-relative=""' if relative else ' data-short=""' if short else ""
    return Markup(f'<time datetime="{escape(at.isoformat())}"{kind}>{escape(shown)}</time>')


def anchor(call_id: str) -> str:
    """A call's row's id in the record tab: its id with only letters, digits and dashes
    (unique on a page: one session's calls differ in their run and step)."""
    return "call-" + re.sub(r"[^A-Za-z0-9_-]", "-", call_id)


templates.env.globals.update(
    anchor=anchor,
    when=when,
    answered_by=texts.answered_by,
    answer_reason=texts.answer_reason,
    reason_label=texts.REASON_LABEL,
    raw_reply=texts.RAW_REPLY,
    how_read=texts.HOW_READ,
    evidence_title=texts.EVIDENCE_TITLE,
    evidence_key=texts.EVIDENCE_KEY,
    evidence_sent=texts.EVIDENCE_SENT,
    evidence_tries=texts.EVIDENCE_TRIES,
    evidence_link=texts.EVIDENCE_LINK,
    probe_title=run_texts.PROBE_EVIDENCE_TITLE,
    inbox_kinds=texts.INBOX_KINDS,
    inbox_states=texts.INBOX_STATES,
    all_kinds=texts.INBOX_ALL_KINDS,
    inbox_open=texts.INBOX_OPEN,
    nothing_answered=texts.INBOX_NOTHING_ANSWERED,
    rename_label=texts.RENAME,
    title_label=texts.TITLE_LABEL,
    rename_button=texts.RENAME_BUTTON,
    session_label=texts.SESSION_ID_LABEL,
    brief=run_texts.brief,
    visible=run_texts.visible,
    source_shown=run_texts.source_shown,
    warning=run_texts.IRREVERSIBLE_WARNING,
    nothing=texts.NOTHING_RECORDED,
    working=texts.WORKING,
    empty=texts.INBOX_EMPTY,
    token_needed=texts.OPERATOR_TOKEN_NEEDED,
    end_token_needed=texts.OPERATOR_END_TOKEN_NEEDED,
    end_reason=texts.OPERATOR_END_REASON,
    operator_sign_out=texts.OPERATOR_SIGN_OUT,
    undo_plan=texts.OPERATOR_UNDO_PLAN,
    undo_step=texts.operator_undo_step,
    no_action=texts.OPERATOR_NO_ACTION,
    not_undoable=texts.operator_not_undoable,
)

router = APIRouter(include_in_schema=False)


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    user = user_of(request)
    base = {
        "agent": service(request).agent.name,
        "shown_call": _shown_call(request),
        "user": user,
        "csrf": csrf_token(request, user) if user else "",
        "notice": None,
    }
    return templates.TemplateResponse(request, name, {**base, **context}, status_code=status)


def render(request: Request, name: str, **context: Any) -> str:
    return templates.get_template(name).render(**context)


def panel_context(request: Request, snap: Snapshot, csrf: str) -> dict[str, Any]:
    svc = service(request)
    question = snap.question
    # The call asked about, written as its question writes it: the tool's order, its values.
    shown = shown_args(svc.agent.tools, question.tool, question.args) if question else []
    return {
        "snap": snap,
        "csrf": csrf,
        "progress": svc.progress(snap.session),
        "busy": svc.busy(snap.session),
        "shown_args": shown,
        "shown_call": _shown_call(request),
    }


def _shown_call(request: Request) -> Callable[[str, dict[str, Any]], str]:
    """A recorded call as every page writes it (`labels.shown_call`, the agent's catalogue)."""
    tools = service(request).agent.tools
    return lambda tool, args: shown_call(tools, tool, args)


def _after_post(request: Request, where: str) -> Response:
    if wants_json(request):
        return Response('{"ok": true}', media_type="application/json")
    return RedirectResponse(where, status_code=303)


# --- signing in ---


@router.get("/login")
def login_page(request: Request) -> Response:
    auth = service(request).auth
    notice = None if auth.login_form else texts.no_login_form(getattr(auth, "header", ""))
    return page(request, "login.html", form=auth.login_form, notice=notice)


@router.post("/login")
def login(request: Request, user: str = Form(...), password: str = Form(...)) -> Response:
    auth = service(request).auth
    cookie = auth.sign_in(user, password) if isinstance(auth, CookieLogin) else None
    if cookie is None:
        return page(request, "login.html", 401, form=auth.login_form, notice=texts.WRONG_PASSWORD)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(USER_COOKIE, cookie, httponly=True, samesite="lax")
    return response


@router.post("/logout")
def logout(request: Request, csrf: str = Form("")) -> Response:
    user = require_user(request)
    check_csrf(request, user, csrf)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(USER_COOKIE)
    response.delete_cookie(OPERATOR_COOKIE)
    return response


# --- the person's pages ---


@router.get("/")
def home(request: Request) -> Response:
    user = require_user(request)
    agent = service(request).agent
    return page(request, "home.html", sessions=sessions_of(agent, user), state="waiting",
                items=inbox_items(agent, user))  # fmt: skip


@router.post("/new")
def new(request: Request, csrf: str = Form("")) -> Response:
    user = require_user(request)
    check_csrf(request, user, csrf)
    session = service(request).new_session_id(user)
    return RedirectResponse(f"/s/{quote(session, safe='')}", status_code=303)


def _filters(kind: str, state: str) -> tuple[str | None, str]:
    """The inbox's filters as given, an unknown one read as none."""
    return (kind if kind in KINDS else None), (state if state in (*STATES, "all") else "waiting")


@router.get("/inbox")
def inbox_page(request: Request, kind: str = "", state: str = "waiting") -> Response:
    user = require_user(request)
    chosen, shown = _filters(kind, state)
    items = inbox_items(service(request).agent, user, kind=chosen,
                        state=None if shown == "all" else shown)  # fmt: skip
    return page(request, "inbox.html", items=items, kind=chosen, state=shown)


@router.get("/s/{session}")
def session_page(request: Request, session: str, tab: str = "chat") -> Response:
    user = require_user(request)
    snap = service(request).snapshot(session, user)
    context = panel_context(request, snap, csrf_token(request, user))
    return page(request, "session.html", tab="record" if tab == "record" else "chat", **context)


@router.post("/s/{session}/turn")
async def turn(
    request: Request, session: str, text: str = Form(""), csrf: str = Form("")
) -> Response:
    user = require_user(request)
    check_csrf(request, user, csrf)
    await finished(service(request).turn(user, session, text))
    return _after_post(request, f"/s/{session}")


@router.post("/s/{session}/answer")
async def answer(
    request: Request,
    session: str,
    question_id: str = Form(""),
    answer: str = Form(""),
    csrf: str = Form(""),
    reason: str = Form(""),
    back: str = Form(""),
) -> Response:
    user = require_user(request)
    check_csrf(request, user, csrf)
    await finished(service(request).answer(user, session, question_id, answer, reason or None))
    # Answered from the inbox: back to it (only there: never a redirect a form names freely).
    return _after_post(request, "/inbox" if back == "/inbox" else f"/s/{session}")


@router.post("/s/{session}/title")
async def rename(
    request: Request, session: str, title: str = Form(""), csrf: str = Form("")
) -> Response:
    user = require_user(request)
    check_csrf(request, user, csrf)
    await run_in_threadpool(service(request).name_session, user, session, title)
    return _after_post(request, f"/s/{session}")


# --- live: server-sent events of rendered HTML ---


async def _stream(request: Request, draw: Callable[[], str]) -> AsyncIterator[str]:
    svc = service(request)
    last: str | None = None
    version = svc.board.version
    while True:
        html = await run_in_threadpool(draw)
        if html != last:
            last = html
            data = "\n".join(f"data: {line}" for line in html.splitlines() or [""])
            yield f"event: update\n{data}\n\n"
        version = await svc.board.wait(version, svc.poll_secs)
        if await request.is_disconnected():
            return


def _events(request: Request, draw: Callable[[], str]) -> StreamingResponse:
    return StreamingResponse(
        _stream(request, draw),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


@router.get("/s/{session}/events")
def session_events(request: Request, session: str, tab: str = "chat") -> Response:
    user = require_user(request)
    svc = service(request)
    svc.snapshot(session, user)  # 404 before the stream starts
    csrf = csrf_token(request, user)
    name = "_record.html" if tab == "record" else "_panel.html"

    def draw() -> str:
        return render(request, name, **panel_context(request, svc.snapshot(session, user), csrf))

    return _events(request, draw)


@router.get("/inbox/events")
def inbox_events(request: Request, kind: str = "", state: str = "waiting") -> Response:
    user = require_user(request)
    agent = service(request).agent
    chosen, shown = _filters(kind, state)
    csrf = csrf_token(request, user)

    def draw() -> str:
        items = inbox_items(agent, user, kind=chosen, state=None if shown == "all" else shown)
        return render(request, "_inbox.html", items=items, state=shown, csrf=csrf)

    return _events(request, draw)


# --- the operator ---


@router.get("/operator")
def operator_page(request: Request) -> Response:
    nonce = operator_nonce(request)
    svc = service(request)
    if nonce is None:
        return page(request, "operator.html", operator=False)
    svc.operator_log.add("list sessions", None, "ok")
    return page(
        request,
        "operator.html",
        operator=True,
        op_csrf=operator_csrf(request, nonce),
        sessions=sessions_of(svc.agent, None),
        actions=svc.operator_log.entries(50),
    )


@router.post("/operator/login")
def operator_login(request: Request, token: str = Form("")) -> Response:
    svc = service(request)
    svc.check_operator(token)
    response = RedirectResponse("/operator", status_code=303)
    cookie = svc.signer.sign({"op": "1", "n": svc.new_nonce()})
    response.set_cookie(OPERATOR_COOKIE, cookie, httponly=True, samesite="strict")
    return response


@router.get("/operator/s/{session}")
def operator_session(request: Request, session: str) -> Response:
    nonce = require_operator(request)
    svc = service(request)
    snap = svc.operator_snapshot(session)
    plan = svc.agent.operator_plan(session)
    actions = [a for a in svc.operator_log.entries(200) if a.session == session]
    return page(request, "operator_session.html", snap=snap, plan=plan, actions=actions,
                csrf=operator_csrf(request, nonce), op_csrf=operator_csrf(request, nonce),
                operator=True)  # fmt: skip


@router.post("/operator/logout")
def operator_logout(request: Request, csrf: str = Form("")) -> Response:
    nonce = require_operator(request)
    check_operator_csrf(request, nonce, csrf)
    service(request).operator_log.add("sign out", None, "ok")
    response = RedirectResponse("/operator", status_code=303)
    response.delete_cookie(OPERATOR_COOKIE)
    return response


@router.post("/operator/s/{session}/undo")
async def operator_undo(request: Request, session: str, token: str = Form(""),
                        csrf: str = Form("")) -> Response:  # fmt: skip
    nonce = require_operator(request)
    check_operator_csrf(request, nonce, csrf)
    reply = await finished(service(request).operator_undo(session, token))
    return _operator_done(request, session, reply)


@router.post("/operator/s/{session}/end")
async def operator_end(request: Request, session: str, token: str = Form(""),
                       reason: str = Form(""), csrf: str = Form("")) -> Response:  # fmt: skip
    nonce = require_operator(request)
    check_operator_csrf(request, nonce, csrf)
    reply = await finished(service(request).operator_end(session, token, reason))
    return _operator_done(request, session, reply)


def _operator_done(request: Request, session: str, reply: Reply) -> Response:
    """After an operator's action: its reply (asked for by script), or the session's page."""
    if wants_json(request):
        return Response(reply.text, media_type="text/plain")
    return RedirectResponse(f"/operator/s/{session}", status_code=303)


__all__ = ["NotSignedIn", "router"]
