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

# the delivery instructions arc appends to the brief it hands the worker (run_attempt); the
# push command is literal, because Claude Code's permission check refuses `$VAR` in Bash
DELIVERY = """

## Delivery (written by radian arc)

You are working in a git worktree on the branch `{branch}`. When the work is done:

1. Run the repository's tests that your change touches.
2. Commit everything on `{branch}` (`git add -A`, then `git commit -m "<what you did>"`);
   leave no uncommitted or untracked files.
3. Push the branch with exactly this command:

       git push {remote} HEAD:{branch}

arc checks that the worktree is clean, that `{branch}` has your commits, and that
`{remote}/{branch}` is your HEAD. Do not push to any other branch.
"""

# the wrapper's own usage line, on its stderr
WRAPPER_USAGE = "usage: python -m radian.arc.worker.wrapper <attempt dir>"

# lines the wrapper writes into the worker log
LOG_LOCK_HELD = "radian arc wrapper: the worktree lock {lock} is held by another process"
LOG_PREPARE_FAILED = "radian arc wrapper: the worktree could not be prepared: {error}"
LOG_START_FAILED = "radian arc wrapper: the worker could not be started: {error}"
LOG_STOPPING = "radian arc wrapper: {reason}: sending SIGTERM to the worker"
LOG_KILLING = "radian arc wrapper: the worker outlived {grace} s after SIGTERM: sending SIGKILL"

# why an attempt that printed no Result ended (the attempt's reason: run and show print it)
REASON_LOCK_HELD = "the worktree lock {lock} is held by another process"
REASON_NO_RESULT = "the worker exited {code} without a Result"
REASON_KILLED = "the worker was killed by signal {signal} without a Result"
REASON_SAID = "{reason}: {line}"
REASON_CLAIMED_ELSEWHERE = "the task is claimed by host {host} on {remote} ({ref}): not run here"
REASON_CLAIM_REFUSED = "the remote refused the claim {ref}: {detail}"
LOG_CLAIM_TAKEN = "radian arc wrapper: took {ref} on {remote} (the run could not reach it)"
LOG_STALE_BRANCH = (
    "radian arc wrapper: the local branch {branch} ({local}) lacked commits of {remote}/{branch}:"
    " the worktree starts from the remote's"
)
