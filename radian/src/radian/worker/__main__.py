"""`python -m radian.worker`: the same as `radian worker`, without loading arc."""

from radian.worker.main import worker_command

worker_command(prog_name="python -m radian.worker")
