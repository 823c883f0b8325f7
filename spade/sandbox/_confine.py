"""Launcher of `unsafe-process` workers: confines itself, then execs the sandbox worker.

Executed as a script (``python3 -s -S _confine.py '<json>'``) by `unsafe_process.py`, with a
cleared environment; standard library only, never imports ``spade``. With namespaces it:

1. unshares mount, network, pid, ipc and uts namespaces (plus a user namespace when not
   root, mapping the caller to 0 so that the mounts below are allowed);
2. mounts a size-capped tmpfs on the empty host folder `base`, puts a read-only copy of the
   worker script and a `scratch/` folder in it, and bind-mounts `scratch/` on itself;
3. remounts every other mount read-only (in this private namespace only: the host keeps its
   mounts), so /tmp, ~, the working directory and /dev/shm cannot be written;
4. forks: the child is pid 1 of the new pid namespace, so no host process can be named, let
   alone signalled; the parent stays behind only to report the child's exit status;
5. in the child: mounts a fresh /proc, becomes uid/gid 65534 with no groups (as root), or
   enters a second user namespace in which it is 65534 (otherwise), arranges to die with
   the parent, and execs the worker with the interpreter it was given.

Without namespaces (a non-root caller on a host that refuses user namespaces) only the
scratch cwd and the cleared environment remain. In `probe` mode the exec'd program is a
self-test instead of the worker; any failure is one line on stderr and exit status 70.
"""

import contextlib
import ctypes
import errno
import json
import os
import resource
import signal
import sys

CONFINE_FAILED = 70
SANDBOX_ID = 65534
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
PR_SET_PDEATHSIG = 1
# Per-mount flags a read-only remount must repeat: dropping one is refused for mounts a user
# namespace inherited ("locked"), and would loosen the mount anyway.
_KEPT_FLAGS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}
PROBE = """
import sys
if sys.version_info < (3, 10):
    sys.exit("Python %d.%d is too old for the sandbox worker (3.10+)" % sys.version_info[:2])
import contextlib, ctypes, json, json.scanner, linecache, os, re, resource, select, shutil
import signal, struct, time, traceback, types
expected = json.loads(sys.argv[1])
found = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups()}
if any(found[key] != value for key, value in expected.items()):
    sys.exit("the worker would run as %r, not %r" % (found, expected))
with open("probe", "w") as handle:
    handle.write("scratch is writable")
"""

_libc = ctypes.CDLL(None, use_errno=True)


class ConfineError(Exception):
    """A confinement step failed; the message names it."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.errno = code


def _call(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise ConfineError(f"{what}: {os.strerror(code)}", code)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _call(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except OSError as exc:
        raise ConfineError(f"write {path}: {exc.strerror}") from None


def _map_ids(inside: int, outside_uid: int, outside_gid: int) -> None:
    """Map one id of a fresh user namespace (its own ids only: no privilege needed)."""
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{inside} {outside_uid} 1\n")
    _write("/proc/self/gid_map", f"{inside} {outside_gid} 1\n")


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash as octal escapes.
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def _remount_read_only(writable: str) -> None:
    """Make every mount but `writable` read-only; /proc is replaced after the fork."""
    with open("/proc/self/mountinfo") as handle:
        lines = handle.read().splitlines()
    for line in lines:
        fields = line.split(" ")
        point, options = _unescape(fields[4]), fields[5].split(",")
        if point == writable or point == "/proc" or point.startswith("/proc/") or "ro" in options:
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for name, bit in _KEPT_FLAGS.items():
            if name in options:
                flags |= bit
        try:
            _mount(None, point, None, flags)
        except ConfineError as exc:
            if exc.errno in (errno.ENOENT, errno.EACCES):
                continue  # a path this process cannot reach, so the worker cannot write there
            raise


def _relay(child: int) -> None:
    """The parent's whole job: hold no pipe, wait, and end the way the child ended."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _confine(spec: dict) -> tuple[str, str]:
    """Steps 1-5 above; returns (scratch, worker script) as seen from inside."""
    root = os.geteuid() == 0
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    _call(_libc.unshare(flags if root else flags | CLONE_NEWUSER), "unshare namespaces")
    if not root:
        _map_ids(0, uid, gid)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing below propagates to the host
    base = spec["base"]
    options = f"size={int(spec['scratch_bytes'])},mode=0755"
    _mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options)
    worker = os.path.join(base, "worker.py")
    with open(spec["worker"], "rb") as source, open(worker, "wb") as copy:
        copy.write(source.read())
    os.chmod(worker, 0o444)
    scratch = os.path.join(base, "scratch")
    os.mkdir(scratch, 0o700)
    if root:
        os.chown(scratch, SANDBOX_ID, SANDBOX_ID)
    _mount(scratch, scratch, None, MS_BIND)
    _remount_read_only(scratch)
    child = os.fork()
    if child:
        _relay(child)
    # A /proc of this pid namespace lists only the sandbox's own processes. Where it cannot be
    # mounted the host's stays: its pids still cannot be signalled from this namespace.
    with contextlib.suppress(ConfineError):
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    if root:
        os.setgroups([])
        os.setgid(SANDBOX_ID)
        os.setuid(SANDBOX_ID)
    else:
        _call(_libc.unshare(CLONE_NEWUSER), "unshare the user namespace of uid 65534")
        _map_ids(SANDBOX_ID, 0, 0)
    # Last, because changing credentials clears it: the worker dies with the parent.
    _call(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl PDEATHSIG")
    return scratch, worker


def main() -> None:
    spec = json.loads(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    python = spec["python"]
    try:
        if spec["namespaces"]:
            scratch, worker = _confine(spec)
        else:
            scratch, worker = spec["base"], spec["worker"]
        os.chdir(scratch)
        if spec["probe"]:
            argv = [python, "-s", "-S", "-c", PROBE, json.dumps(spec["expect"])]
        else:
            arguments = dict(spec["worker_arguments"], scratch=scratch)
            argv = [python, "-s", "-S", worker, json.dumps(arguments)]
        try:
            os.execv(python, argv)
        except OSError as exc:
            raise ConfineError(
                f"cannot run {python} as uid {os.getuid()}: {exc.strerror}"
            ) from None
    except (ConfineError, OSError) as exc:
        sys.stderr.write(f"{exc}\n")
        sys.stderr.flush()
        os._exit(CONFINE_FAILED)


if __name__ == "__main__":
    main()
