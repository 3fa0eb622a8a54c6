#!/usr/bin/env python3
"""Takes the flock on the file its argument names, prints "locked", and holds it until killed."""

import fcntl
import sys
import time

with open(sys.argv[1], "a") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(120)
