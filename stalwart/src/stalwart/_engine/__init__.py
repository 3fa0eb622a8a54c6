"""The engine, private: a run's states and transitions, its steps, a person's answers, the
rollback, resume, the model loop, keys and what counts as in doubt.

Nothing here is public API. Its faces are `stalwart.agent` (`Agent`, which drives
stalwart's own runs) and `stalwart.guarded` (the guarded-run API, which drives a foreign
framework's); nothing else imports the engine
(tests/test_layering.py holds it). What others read of a run lives in public modules the
engine reads too: `states` (a run's states and their table), `labels` (how a call is
named and shown), `backoff` (the undo's schedule), `record.sessions` (a session's id),
`tools.current` (the call being sent now).
"""
