"""A small seccomp filter, installed by the boot program in both runtimes (defence in depth).

Refused (EPERM): new user namespaces (the sandbox could otherwise become "root" of a namespace of its own and mount
things, a favourite road to kernel bugs), kernel keyrings, BPF, perf events, userfaultfd, io_uring and module/kexec
loading; and every syscall of a foreign ABI (i386, x32), whose numbers would slip past the filter. clone3 answers
ENOSYS (its flags cannot be inspected): glibc then falls back to clone, whose flags are checked. Only x86_64 and
aarch64; elsewhere no filter is installed.
"""

from __future__ import annotations

import platform
import struct
from typing import Any

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_SYSCALLS = {  # unshare, clone, clone3, then the refused ones
    "x86_64": (272, 56, 435, (248, 249, 250, 321, 298, 323, 425, 426, 427, 246, 320, 175, 313, 176)),
    "aarch64": (97, 220, 435, (217, 218, 219, 280, 241, 282, 425, 426, 427, 104, 294, 105, 273, 106)),
}
_CLONE_NEWUSER = 0x10000000


def seccomp_filter(machine: str | None = None) -> bytes:
    """The BPF program (struct sock_filter[]) for this machine's architecture; b"" where there is none."""
    machine = machine or platform.machine()
    if machine not in _SYSCALLS:
        return b""
    unshare, clone, clone3, refused = _SYSCALLS[machine]
    allow, enosys, eperm = 0x7FFF0000, 0x00050000 | 38, 0x00050000 | 1
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    prog: list[tuple[int, Any, Any, int]] = [(ld, 0, 0, 4), (jeq, 0, "enosys", _AUDIT_ARCH[machine]), (ld, 0, 0, 0)]
    if machine == "x86_64":
        prog.append((jge, "enosys", 0, 0x40000000))  # x32 ABI
    prog += [(jeq, "flags", 0, unshare), (jeq, "flags", 0, clone), (jeq, "enosys", 0, clone3)]
    prog += [(jeq, "eperm", 0, nr) for nr in refused]
    prog.append((ret, 0, 0, allow))
    labels = {"flags": len(prog), "enosys": len(prog) + 3, "eperm": len(prog) + 4}
    prog += [
        (ld, 0, 0, 16),
        (jset, "eperm", 0, _CLONE_NEWUSER),
        (ret, 0, 0, allow),
        (ret, 0, 0, enosys),
        (ret, 0, 0, eperm),
    ]
    out = b""
    for i, (code, jt, jf, k) in enumerate(prog):
        jt = labels[jt] - i - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - i - 1 if isinstance(jf, str) else jf
        out += struct.pack("HBBI", code, jt, jf, k)
    return out
