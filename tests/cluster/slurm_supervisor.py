#!/usr/bin/env python3
"""The keeper of one local test cluster (tests/cluster/local_slurm.sh starts it; no other use).

    slurm_supervisor.py --dir DIR --owner PID [--stop-first PIDFILE ...]
                        [--stop-last PIDFILE ...] -- LAUNCH_COMMAND...

It makes itself a child subreaper and runs LAUNCH_COMMAND, which starts munged, slurmctld
and slurmd. Those fork into the background, and slurmd's slurmstepd and the jobs'
processes fork again; as a subreaper, this process inherits every one of them (not PID 1)
and reaps each when it exits, so none is left a zombie even where PID 1 reaps nothing.
Its own process group keeps it out of the terminal's Ctrl-C and of a kill of the caller's
group. The launch command's exit status goes to DIR/launch.rc.

It then waits until it gets SIGTERM, SIGINT or SIGHUP (slurm_stop), or until the owner
process is gone (the caller's shell killed with SIGKILL, e.g. by a test timeout), and
then stops the cluster: the --stop-first daemons in their order (SIGTERM, SIGKILL after
10 s), every other descendant (slurmstepd, the jobs: SIGTERM, SIGKILL after 1 s), the
--stop-last daemons; and removes DIR. It signals only its own descendants, so a stale
pid file never makes it kill an unrelated process.
"""
import argparse
import ctypes
import errno
import os
import shutil
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def stat_fields(pid):
    """Fields 3.. of /proc/PID/stat (state, ppid, ..., starttime at [19]); None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def alive(pid, starttime=None):
    fields = stat_fields(pid)
    if fields is None or fields[0] in ("Z", "X"):
        return False
    return starttime is None or fields[19] == starttime


def descendants():
    """Every live process below this one."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = stat_fields(name)
            if fields is not None and fields[0] not in ("Z", "X"):
                children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Supervisor:
    def __init__(self, args):
        self.args = args
        self.launch = None
        self.stop_requested = False

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.launch is not None and pid == self.launch:
                self.launch = None
                rc = os.waitstatus_to_exitcode(status)
                tmp = os.path.join(self.args.dir, "launch.rc.tmp")
                with open(tmp, "w") as f:
                    f.write(f"{rc}\n")
                os.replace(tmp, os.path.join(self.args.dir, "launch.rc"))

    def pid_from(self, pidfile):
        try:
            with open(pidfile) as f:
                pid = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if pid in descendants() else None

    def wait_gone(self, pids, seconds):
        deadline = time.monotonic() + seconds
        while True:
            self.reap()
            pids = [p for p in pids if alive(p)]
            if not pids or time.monotonic() >= deadline:
                return pids
            time.sleep(0.02)

    def terminate(self, pids, grace):
        pids = [p for p in pids if p != os.getpid()]
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            pids = self.wait_gone(pids, grace if sig == signal.SIGTERM else 5)
            if not pids:
                return
        print(f"slurm_supervisor: still running after SIGKILL: {pids}", file=sys.stderr)

    def stop(self):
        for pidfile in self.args.stop_first:
            pid = self.pid_from(pidfile)
            if pid is not None:
                self.terminate([pid], 10)
        last = [self.pid_from(p) for p in self.args.stop_last]
        last = [p for p in last if p is not None]
        for _ in range(3):  # the jobs, reparented here when their slurmstepd ends
            rest = [p for p in descendants() if p not in last]
            if not rest:
                break
            self.terminate(rest, 1)
        self.terminate(last, 10)
        self.terminate(descendants(), 1)
        self.reap()
        shutil.rmtree(self.args.dir, ignore_errors=True)

    def run(self):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            print("slurm_supervisor: prctl(PR_SET_CHILD_SUBREAPER): "
                  + os.strerror(ctypes.get_errno()), file=sys.stderr)
        try:
            os.setpgid(0, 0)
        except OSError as e:
            if e.errno != errno.EPERM:  # already a group (or session) leader
                raise
        owner = self.args.owner
        owner_fields = stat_fields(owner)
        owner_start = owner_fields[19] if owner_fields else None

        def on_signal(signum, frame):
            self.stop_requested = True

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, on_signal)

        self.launch = os.fork()
        if self.launch == 0:
            try:
                for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
                os.execvp(self.args.command[0], self.args.command)
            finally:
                os._exit(127)

        while not self.stop_requested and owner_start is not None and alive(owner, owner_start):
            self.reap()
            time.sleep(0.1)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        self.stop()
        return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--owner", type=int, required=True)
    parser.add_argument("--stop-first", action="append", default=[])
    parser.add_argument("--stop-last", action="append", default=[])
    parser.add_argument("command", nargs="+")
    return Supervisor(parser.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
