"""Every line the worker package writes for a person to read, in one place."""

# validate_exec_args problems
EXEC_ARGS_EMPTY = "worker.exec_args is empty: it needs at least the program to run"
PROGRAM_IS_PLACEHOLDER = "worker.exec_args[0] ({arg!r}) must name the program, not a placeholder"
PROGRAM_NOT_FOUND = "worker.exec_args[0]: program {program!r} was not found"
PROGRAM_NOT_FOUND_ON_PATH = "worker.exec_args[0]: program {program!r} was not found on PATH"
PROGRAM_NOT_EXECUTABLE = "worker.exec_args[0]: program {program!r} is not executable"
UNKNOWN_PLACEHOLDER = (
    "worker.exec_args[{index}] ({arg!r}): unknown placeholder {{{name}}}; known: {known}"
)
MALFORMED_PLACEHOLDER = (
    "worker.exec_args[{index}] ({arg!r}): malformed placeholder: {error}; write {{{{ and }}}} "
    "for literal braces"
)
PLACEHOLDER_FORMAT_SPEC = (
    "worker.exec_args[{index}] ({arg!r}): placeholder {{{name}}} takes no format spec or conversion"
)
RESUME_ARGS_NOT_ALONE = (
    "worker.exec_args[{index}] ({arg!r}): {{resume_args}} must be an argument on its own"
)

# the wrapper's own usage line, on its stderr
WRAPPER_USAGE = "usage: python -m radian.arc.worker.wrapper <attempt dir>"

# lines the wrapper writes into the worker log
LOG_LOCK_HELD = "radian arc wrapper: the worktree lock {lock} is held by another process"
LOG_PREPARE_FAILED = "radian arc wrapper: the worktree could not be prepared: {error}"
LOG_START_FAILED = "radian arc wrapper: the worker could not be started: {error}"
LOG_STOPPING = "radian arc wrapper: {reason}: sending SIGTERM to the worker"
LOG_KILLING = "radian arc wrapper: the worker outlived {grace} s after SIGTERM: sending SIGKILL"
