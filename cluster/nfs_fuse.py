"""A small FUSE client for NFSv3, for the emulated cluster of redio.

The kernel of the development machines has no NFS client, and none is
packaged, so the emulator carries this one: libnfs (PyPI ``libnfs``, a SWIG
binding of the C library) speaks NFSv3 to the server, mfusepy (ctypes over
libfuse3) serves the mount point.

Usage (the emulator starts it inside a client's network namespace with
``nsenter --net=/run/netns/NAME``, so the mount shows up in the root mount
namespace and the traffic leaves through that namespace's capped link)::

    nfs_fuse.py nfs://SERVER/EXPORT MOUNTPOINT

It runs in the foreground until the mount point is unmounted or it gets
SIGTERM/SIGINT.

What it supports, which is what MPI I/O tests need: getattr, readdir,
create, open, read and write at any offset (pread/pwrite), truncate,
fsync, unlink, rename, mkdir, rmdir, chmod, chown. ``utimens`` is accepted
and ignored (the binding cannot pass a ``struct timeval[2]``), and
``statfs`` reports fixed sizes (the binding has no ``nfs_statvfs``).

Design notes:

* libnfs's synchronous API is not thread-safe, so FUSE runs single-threaded
  (``nothreads``); one mount is one NFS connection, as a kernel client is.
* The kernel sends writes of up to 1 MiB (``max_write``) and reads ahead up
  to 1 MiB: 32 KiB requests cap throughput far below 1 Gbit/s.
* Attribute and entry caching is off (``attr_timeout=0``,
  ``entry_timeout=0``): what another "node" wrote is visible at the next
  open, as NFS's close-to-open consistency promises, and sizes are never
  stale. The kernel page cache is dropped at every open (FUSE's default).
* libnfs may return short reads and writes (at most the server's
  ``rtmax``/``wtmax`` per call); both are looped here.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import stat
import sys
import threading
from typing import Any

import libnfs  # the SWIG module; its low-level nfs_* functions are used
import mfusepy

log = logging.getLogger("nfs_fuse")

MIB = 1 << 20


# libnfs 4.0 reports a failed WRITE as -EFAULT whatever the server said;
# the NFS status is only in the error text.
NFS3_ERRORS = {
    "NFS3ERR_NOSPC": errno.ENOSPC,
    "NFS3ERR_DQUOT": errno.EDQUOT,
    "NFS3ERR_FBIG": errno.EFBIG,
    "NFS3ERR_ROFS": errno.EROFS,
    "NFS3ERR_STALE": errno.ESTALE,
    "NFS3ERR_ACCES": errno.EACCES,
    "NFS3ERR_PERM": errno.EPERM,
    "NFS3ERR_IO": errno.EIO,
}


def check(status: int, what: str, path: str, ctx: Any = None) -> int:
    """Returns a non-negative libnfs status; raises FuseOSError for -errno
    (with the NFS status from libnfs's error text where libnfs loses it)."""
    if status >= 0:
        return status
    code = -status
    message = libnfs.nfs_get_error(ctx) if ctx is not None else ""
    if code == errno.EFAULT and message:
        code = next((e for name, e in NFS3_ERRORS.items() if name in message), errno.EIO)
    log.debug("%s %s: %s (%s)", what, path, os.strerror(code), message)
    raise mfusepy.FuseOSError(code)


def stat_dict(st: Any) -> dict[str, int]:
    """Converts libnfs's ``nfs_stat_64`` into the dict mfusepy expects
    (times in nanoseconds: the operations class sets ``use_ns``)."""
    return {
        "st_mode": st.nfs_mode,
        "st_ino": st.nfs_ino,
        "st_nlink": st.nfs_nlink,
        "st_uid": st.nfs_uid,
        "st_gid": st.nfs_gid,
        "st_rdev": st.nfs_rdev,
        "st_size": st.nfs_size,
        "st_blksize": MIB,
        "st_blocks": st.nfs_blocks,
        "st_atime": st.nfs_atime * 10**9 + st.nfs_atime_nsec,
        "st_mtime": st.nfs_mtime * 10**9 + st.nfs_mtime_nsec,
        "st_ctime": st.nfs_ctime * 10**9 + st.nfs_ctime_nsec,
    }


class NfsOperations(mfusepy.Operations):
    """FUSE operations over one libnfs context (one NFS mount)."""

    use_ns = True  # times are integer nanoseconds

    def __init__(self, url: str) -> None:
        self.ctx = libnfs.nfs_init_context()
        parsed = libnfs.nfs_parse_url_dir(self.ctx, url)
        if parsed is None:
            raise SystemExit(f"nfs_fuse: cannot parse {url}: {libnfs.nfs_get_error(self.ctx)}")
        status = libnfs.nfs_mount(self.ctx, parsed.server, parsed.path)
        if status != 0:
            raise SystemExit(f"nfs_fuse: mount {url} failed: {libnfs.nfs_get_error(self.ctx)}")
        self.readmax = libnfs.nfs_get_readmax(self.ctx)
        self.writemax = libnfs.nfs_get_writemax(self.ctx)
        self.files: dict[int, Any] = {}  # FUSE fh -> libnfs struct nfsfh *
        self.next_fh = 1
        self.mutex = threading.Lock()  # belt and braces: FUSE is single-threaded
        log.info("mounted %s (rtmax %d, wtmax %d)", url, self.readmax, self.writemax)

    def init_with_config(self, conn: Any, config: Any) -> None:
        """Asks the kernel for 1 MiB writes and read-ahead (libfuse3 takes
        these in the connection info, not as ``-o`` options)."""
        if conn is not None:
            conn.max_write = MIB
            conn.max_readahead = MIB
            log.info("fuse: max_write %d, max_readahead %d", conn.max_write, conn.max_readahead)

    # ---- file handles -------------------------------------------------

    def _remember(self, handle: Any) -> int:
        fh = self.next_fh
        self.next_fh += 1
        self.files[fh] = handle
        return fh

    def _handle(self, fh: int) -> Any:
        try:
            return self.files[fh]
        except KeyError:
            raise mfusepy.FuseOSError(errno.EBADF) from None

    # ---- attributes ---------------------------------------------------

    def getattr(self, path: str, fh: int | None = None) -> dict[str, int]:
        st = libnfs.nfs_stat_64()
        with self.mutex:
            if fh is not None and fh in self.files:
                check(libnfs.nfs_fstat64(self.ctx, self.files[fh], st), "fstat", path)
            else:
                check(libnfs.nfs_lstat64(self.ctx, path, st), "lstat", path)
        return stat_dict(st)

    def chmod(self, path: str, mode: int) -> int:
        with self.mutex:
            return check(libnfs.nfs_chmod(self.ctx, path, stat.S_IMODE(mode)), "chmod", path)

    def chown(self, path: str, uid: int, gid: int) -> int:
        with self.mutex:
            return check(libnfs.nfs_chown(self.ctx, path, uid, gid), "chown", path)

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        return 0  # accepted, not applied: see the module docstring

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        with self.mutex:
            if fh is not None and fh in self.files:
                status = libnfs.nfs_ftruncate(self.ctx, self.files[fh], length)
            else:
                status = libnfs.nfs_truncate(self.ctx, path, length)
            return check(status, "truncate", path)

    def statfs(self, path: str) -> dict[str, int]:
        # Fixed numbers: the binding has no nfs_statvfs. 1 TiB, all free.
        blocks = (1 << 40) // MIB
        return {
            "f_bsize": MIB,
            "f_frsize": MIB,
            "f_blocks": blocks,
            "f_bfree": blocks,
            "f_bavail": blocks,
            "f_namemax": 255,
        }

    def access(self, path: str, amode: int) -> int:
        return 0

    # ---- names --------------------------------------------------------

    def readdir(self, path: str, fh: int) -> list[str]:
        dirp = libnfs.new_NFSDirHandle()
        names = [".", ".."]
        with self.mutex:
            check(libnfs.nfs_opendir(self.ctx, path, dirp), "opendir", path)
            handle = libnfs.NFSDirHandle_value(dirp)
            try:
                while (entry := libnfs.nfs_readdir(self.ctx, handle)) is not None:
                    if entry.name not in (".", ".."):
                        names.append(entry.name)
            finally:
                libnfs.nfs_closedir(self.ctx, handle)
        return names

    def mkdir(self, path: str, mode: int) -> int:
        with self.mutex:
            check(libnfs.nfs_mkdir(self.ctx, path), "mkdir", path)
            return check(libnfs.nfs_chmod(self.ctx, path, stat.S_IMODE(mode)), "chmod", path)

    def rmdir(self, path: str) -> int:
        with self.mutex:
            return check(libnfs.nfs_rmdir(self.ctx, path), "rmdir", path)

    def unlink(self, path: str) -> int:
        with self.mutex:
            return check(libnfs.nfs_unlink(self.ctx, path), "unlink", path)

    def rename(self, old: str, new: str) -> int:
        with self.mutex:
            return check(libnfs.nfs_rename(self.ctx, old, new), "rename", old)

    # ---- open files ---------------------------------------------------

    def create(self, path: str, mode: int, fi: Any = None) -> int:
        flags = (fi if isinstance(fi, int) else os.O_RDWR) | os.O_CREAT
        out = libnfs.new_NFSFileHandle()
        with self.mutex:
            status = libnfs.nfs_create(self.ctx, path, flags, stat.S_IMODE(mode), out)
            check(status, "create", path)
            return self._remember(libnfs.NFSFileHandle_value(out))

    def open(self, path: str, flags: int) -> int:
        out = libnfs.new_NFSFileHandle()
        # O_APPEND is the kernel's business (it passes the offset); libnfs
        # would otherwise look up the size on every write.
        flags &= ~os.O_APPEND
        with self.mutex:
            check(libnfs.nfs_open(self.ctx, path, flags, out), "open", path)
            return self._remember(libnfs.NFSFileHandle_value(out))

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        buf = bytearray(size)
        view = memoryview(buf)
        done = 0
        with self.mutex:
            handle = self._handle(fh)
            while done < size:
                want = min(size - done, self.readmax)
                chunk = view[done : done + want]
                got = check(libnfs.nfs_pread(self.ctx, handle, offset + done, want, chunk), "read", path, self.ctx)
                if got == 0:  # end of file
                    break
                done += got
        return bytes(view[:done])

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        buf = bytearray(data)  # the binding wants a writable buffer
        view = memoryview(buf)
        done = 0
        with self.mutex:
            handle = self._handle(fh)
            while done < len(buf):
                want = min(len(buf) - done, self.writemax)
                chunk = view[done : done + want]
                put = check(libnfs.nfs_pwrite(self.ctx, handle, offset + done, want, chunk), "write", path, self.ctx)
                if put == 0:
                    raise mfusepy.FuseOSError(errno.EIO)
                done += put
        return done

    def flush(self, path: str, fh: int) -> int:
        return 0  # every write already reached the server

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        with self.mutex:
            return check(libnfs.nfs_fsync(self.ctx, self._handle(fh)), "fsync", path)

    def release(self, path: str, fh: int) -> int:
        with self.mutex:
            handle = self.files.pop(fh, None)
            if handle is not None:
                libnfs.nfs_close(self.ctx, handle)
        return 0


def main(argv: list[str] | None = None) -> int:
    """Parses the command line, connects to the server, serves the mount."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="nfs://SERVER/EXPORT (NFSv3)")
    parser.add_argument("mountpoint")
    parser.add_argument("--fsname", default="redio-nfs", help="name shown by mount(8)")
    parser.add_argument("--debug", action="store_true", help="log every failing call")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.INFO,
        format="%(asctime)s nfs_fuse[%(process)d] %(message)s",
    )
    if not os.path.isdir(args.mountpoint):
        print(f"nfs_fuse: mount point {args.mountpoint} is not a directory", file=sys.stderr)
        return 2
    operations = NfsOperations(args.url)
    # SIGTERM ends the FUSE loop the way SIGINT does (libfuse handles both
    # once its session starts; until then the default action applies).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    mfusepy.FUSE(
        operations,
        args.mountpoint,
        foreground=True,
        nothreads=True,
        fsname=args.fsname,
        subtype="nfs",
        allow_other=True,
        attr_timeout=0,
        entry_timeout=0,
        negative_timeout=0,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
