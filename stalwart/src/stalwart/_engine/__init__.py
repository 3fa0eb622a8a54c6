"""The engine, private: a run's states and transitions, its steps, a person's answers, the
rollback, resume, the model loop, keys and what counts as in doubt.

Nothing here is public API; `stalwart.Agent` is the facade over it.
"""
