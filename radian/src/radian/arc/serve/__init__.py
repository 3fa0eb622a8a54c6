"""`radian arc serve`: a read-only web page of the fleet, live through server-sent events,
and a JSON API beside it (`/api/v1/state`, `/api/v1/tasks/<task>`, `/api/v1/refresh`).

`fleet` reads arc's files (no web framework); `app` is the FastAPI app over it; `server`
runs it on uvicorn. The web framework is imported only by `app` and `server`: they need
the serve extra (`pip install 'radian[serve]'`).
"""
