"""radian arc: a supervisor for coding agents working through a plan of tasks."""
