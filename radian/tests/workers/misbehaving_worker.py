#!/usr/bin/env python3
"""A scripted worker that misbehaves in the way its one argument names.

crash           print a little, then die with a traceback (no Result)
silent          print one line, then say nothing and wait (stall)
chatter         print a line every 0.1 s, forever (wall_time)
ignore_sigterm  ignore SIGTERM and stay silent (SIGKILL after the grace period)
orphan PATH     start a silent grandchild, write its pid to PATH, print a Result, exit
"""

import signal
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    mode = sys.argv[1]
    print(f"misbehaving: {mode}", flush=True)
    if mode == "crash":
        raise RuntimeError("the worker crashed")
    if mode == "silent":
        time.sleep(120)
    elif mode == "chatter":
        while True:
            print("still busy", flush=True)
            time.sleep(0.1)
    elif mode == "ignore_sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ignoring SIGTERM", flush=True)
        time.sleep(120)
    elif mode == "orphan":
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        Path(sys.argv[2]).write_text(str(child.pid))
        print('{"type": "result", "outcome": "failed"}', flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
