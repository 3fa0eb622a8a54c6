"""The radian worker: radian's own coding agent, an ACP agent over stdio (`radian worker`).

A model loop on the official `anthropic` and `openai` clients (the extras
`radian[anthropic]`, `radian[openai]`), with tools to read, write and edit files and run
commands in its working directory, each done through the ACP client (so the client's
permission policy applies: under radian arc, the task's worktree only). Sessions are kept
under the repository's `.radian/worker/sessions/`, so `session/load` resumes one; each prompt
turn's fee is in the response's `_meta.radian.cost_usd`, a model error in
`_meta.radian.error` (text). radian/docs/acp.md describes it.
"""
