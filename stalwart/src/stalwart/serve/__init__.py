"""The interface (chapter 35): `stalwart serve` and `stalwart chat`.

`Service` holds the agent and everything the interface adds (run threads, progress,
the question hook, the operator's log, the login); `create_app(service)` is the ASGI
app of its pages and JSON API. Needs the `serve` extra: `pip install 'stalwart[serve]'`.
"""

from __future__ import annotations

from .app import create_app
from .auth import Authenticator, CookieLogin, ProxyHeader
from .service import Service
from .users import Users

__all__ = ["Authenticator", "CookieLogin", "ProxyHeader", "Service", "Users", "create_app"]
