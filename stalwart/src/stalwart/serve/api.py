"""The JSON API under /api/: what the pages do, for an application's own front end.

Sign in (`POST /api/login`, or the reverse proxy's header), read `GET /api/me` for the
anti-forgery token, and send it as `X-CSRF-Token` with every POST. Errors are JSON:
`{"code": "...", "message": "..."}` with the error's stable code.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from ..errors import InputRefused, NotSignedIn
from ..texts import serve as texts
from .auth import OPERATOR_COOKIE, USER_COOKIE, CookieLogin
from .schemas import (
    AcceptedOut,
    AnswerIn,
    AnswerOut,
    CallOut,
    ErrorOut,
    InboxItemOut,
    LoginIn,
    MeOut,
    MessageOut,
    NewSessionOut,
    OperatorActionOut,
    OperatorEndIn,
    OperatorLoginIn,
    OperatorUndoIn,
    ReplyOut,
    SessionOut,
    TitleIn,
    TurnIn,
    iso,
)
from .views import KINDS, STATES, inbox, inbox_items, sessions_of
from .web import (
    check_csrf,
    check_operator_csrf,
    csrf_token,
    finished,
    operator_csrf,
    require_operator,
    require_user,
    service,
)

ERRORS: dict[int | str, dict[str, object]] = {
    status: {"model": ErrorOut} for status in (401, 403, 404, 409, 422, 503)
}

router = APIRouter(prefix="/api", responses=ERRORS)


def _session_out(request: Request, session: str, user: str | None) -> SessionOut:
    found = service(request).snapshot(session, user)
    return SessionOut.of(
        found, progress=service(request).progress(session), busy=service(request).busy(session)
    )


@router.post("/login", response_model=MeOut, tags=["sign in"])
def login(body: LoginIn, request: Request, response: Response) -> MeOut:
    auth = service(request).auth
    if not isinstance(auth, CookieLogin):
        raise NotSignedIn(texts.NOT_SIGNED_IN)
    cookie = auth.sign_in(body.user, body.password)
    if cookie is None:
        raise NotSignedIn(texts.WRONG_PASSWORD)
    response.set_cookie(USER_COOKIE, cookie, httponly=True, samesite="lax")
    nonce = auth.signer.read(cookie) or {}
    return MeOut(user=body.user, csrf=service(request).signer.csrf("user", body.user,
                                                                  nonce.get("n", "")))  # fmt: skip


@router.post("/logout", status_code=204, tags=["sign in"])
def logout(response: Response) -> None:
    response.delete_cookie(USER_COOKIE)
    response.delete_cookie(OPERATOR_COOKIE)


@router.get("/me", response_model=MeOut, tags=["sign in"])
def me(request: Request) -> MeOut:
    user = require_user(request)
    return MeOut(user=user, csrf=csrf_token(request, user))


@router.get("/sessions", response_model=list[SessionOut], tags=["sessions"])
def list_sessions(request: Request) -> list[SessionOut]:
    user = require_user(request)
    svc = service(request)
    return [
        SessionOut.of(s, progress=svc.progress(s.session), busy=svc.busy(s.session))
        for s in sessions_of(svc.agent, user)
    ]


@router.post("/sessions", response_model=NewSessionOut, status_code=201, tags=["sessions"])
def new_session(request: Request) -> NewSessionOut:
    user = require_user(request)
    check_csrf(request, user, None)
    return NewSessionOut(session=service(request).new_session_id(user))


@router.get("/sessions/{session}", response_model=SessionOut, tags=["sessions"])
def get_session(session: str, request: Request) -> SessionOut:
    return _session_out(request, session, require_user(request))


@router.post(
    "/sessions/{session}/turns",
    response_model=ReplyOut,
    responses={202: {"model": AcceptedOut}},
    tags=["sessions"],
)
async def send_turn(session: str, body: TurnIn, request: Request) -> ReplyOut | JSONResponse:
    user = require_user(request)
    check_csrf(request, user, None)
    future = service(request).turn(user, session, body.text)
    if not body.wait:
        return JSONResponse(AcceptedOut(session=session).model_dump(), status_code=202)
    return ReplyOut.of(await finished(future))


@router.post(
    "/sessions/{session}/answers",
    response_model=ReplyOut,
    responses={202: {"model": AcceptedOut}},
    tags=["sessions"],
)
async def send_answer(session: str, body: AnswerIn, request: Request) -> ReplyOut | JSONResponse:
    user = require_user(request)
    check_csrf(request, user, None)
    future = service(request).answer(user, session, body.question_id, body.answer, body.reason)
    if not body.wait:
        return JSONResponse(AcceptedOut(session=session).model_dump(), status_code=202)
    return ReplyOut.of(await finished(future))


@router.get("/sessions/{session}/record", response_model=list[CallOut], tags=["sessions"])
def get_record(session: str, request: Request) -> list[CallOut]:
    found = service(request).snapshot(session, require_user(request))
    return [CallOut.of(call) for call in found.calls]


@router.post("/sessions/{session}/title", response_model=SessionOut, tags=["sessions"])
def name_session(session: str, body: TitleIn, request: Request) -> SessionOut:
    """Give the session a name a person reads instead of its first turn."""
    user = require_user(request)
    check_csrf(request, user, None)
    service(request).name_session(user, session, body.title)
    return _session_out(request, session, user)


@router.get("/sessions/{session}/answers", response_model=list[AnswerOut], tags=["sessions"])
def get_answers(session: str, request: Request) -> list[AnswerOut]:
    """Every answer given in the session: who, when, to which question, and why."""
    found = service(request).snapshot(session, require_user(request))
    return [AnswerOut.of(given) for given in found.answers]


@router.get("/sessions/{session}/memory", response_model=list[MessageOut], tags=["sessions"])
def get_memory(session: str, request: Request) -> list[MessageOut]:
    found = service(request).snapshot(session, require_user(request))
    return [MessageOut.of(message) for message in found.memory]


@router.get("/inbox", response_model=list[SessionOut], tags=["sessions"])
def get_inbox(request: Request, kind: str | None = None) -> list[SessionOut]:
    """Your sessions waiting for an answer, newest question first; `kind`: of that kind only
    (confirm, outcome, undo)."""
    user = require_user(request)
    svc = service(request)
    return [
        SessionOut.of(s, progress=svc.progress(s.session), busy=svc.busy(s.session))
        for s in inbox(svc.agent, user)
        if kind is None or (s.question is not None and s.question.kind == kind)
    ]


@router.get("/inbox/items", response_model=list[InboxItemOut], tags=["sessions"])
def get_inbox_items(
    request: Request, kind: str | None = None, state: str = "waiting"
) -> list[InboxItemOut]:
    """The inbox as its page lists it: each question waiting (`state=waiting`), answered
    (`answered`) or both (`all`), of one `kind` or every kind, newest first."""
    user = require_user(request)
    if kind is not None and kind not in KINDS:
        raise InputRefused(texts.inbox_filter("kind", kind, KINDS))
    if state not in (*STATES, "all"):
        raise InputRefused(texts.inbox_filter("state", state, (*STATES, "all")))
    found = inbox_items(service(request).agent, user, kind=kind,
                        state=None if state == "all" else state)  # fmt: skip
    return [InboxItemOut.of(item) for item in found]


# --- the operator ---


@router.post("/operator/login", response_model=MeOut, tags=["operator"])
def operator_login(body: OperatorLoginIn, request: Request, response: Response) -> MeOut:
    svc = service(request)
    svc.check_operator(body.token)
    cookie = svc.signer.sign({"op": "1", "n": svc.new_nonce()})
    response.set_cookie(OPERATOR_COOKIE, cookie, httponly=True, samesite="strict")
    nonce = (svc.signer.read(cookie) or {})["n"]
    return MeOut(user="operator", csrf=operator_csrf(request, nonce))


@router.get("/operator/sessions", response_model=list[SessionOut], tags=["operator"])
def operator_sessions(request: Request) -> list[SessionOut]:
    require_operator(request)
    svc = service(request)
    svc.operator_log.add("list sessions", None, "ok")
    return [
        SessionOut.of(s, progress=svc.progress(s.session), busy=svc.busy(s.session))
        for s in sessions_of(svc.agent, None)
    ]


@router.get("/operator/sessions/{session}/record", response_model=list[CallOut], tags=["operator"])
def operator_record(session: str, request: Request) -> list[CallOut]:
    require_operator(request)
    return [CallOut.of(call) for call in service(request).operator_snapshot(session).calls]


@router.get(
    "/operator/sessions/{session}/answers", response_model=list[AnswerOut], tags=["operator"]
)
def operator_answers(session: str, request: Request) -> list[AnswerOut]:
    require_operator(request)
    return [AnswerOut.of(a) for a in service(request).operator_snapshot(session).answers]


@router.post("/operator/sessions/{session}/undo", response_model=ReplyOut, tags=["operator"])
async def operator_undo(session: str, body: OperatorUndoIn, request: Request) -> ReplyOut:
    nonce = require_operator(request)
    check_operator_csrf(request, nonce, None)
    return ReplyOut.of(await finished(service(request).operator_undo(session, body.token)))


@router.post("/operator/sessions/{session}/end", response_model=ReplyOut, tags=["operator"])
async def operator_end(session: str, body: OperatorEndIn, request: Request) -> ReplyOut:
    """End a run that cannot go on (see `Agent.operator_end`)."""
    nonce = require_operator(request)
    check_operator_csrf(request, nonce, None)
    svc = service(request)
    return ReplyOut.of(await finished(svc.operator_end(session, body.token, body.reason)))


@router.get("/operator/actions", response_model=list[OperatorActionOut], tags=["operator"])
def operator_actions(request: Request) -> list[OperatorActionOut]:
    require_operator(request)
    return [
        OperatorActionOut(**vars(a), done_at=iso(a.at))
        for a in service(request).operator_log.entries()
    ]
