"""The filesystem store both jobs write and read through (local with the os module, anything else
through Hadoop's FileSystem: HDFS, s3a, viewfs), local and remote paths told apart, and who owns an
output directory (:func:`check_owned`: ``--overwrite`` and ``--resume`` only over contentx's own
files).  The layouts written with it are :mod:`contentx_udf.outputs`'."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import shutil

from ..errors import UserError

#: A URI scheme and its colon (RFC 3986): ``file:``, ``s3a:``, ``hdfs:``...
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def is_url(path: str) -> bool:
    """``scheme://...`` (any scheme, ``file://`` included)."""
    scheme = _SCHEME.match(path)
    return scheme is not None and path.startswith("//", scheme.end())


def is_remote(path: str) -> bool:
    """A URL other than ``file://`` (https, s3, s3a, hdfs, ...)."""
    return is_url(path) and not path.startswith("file://")


def local_path(path: str) -> str:
    """A local path, ``file://`` URL or ``file:/`` URI (as Hadoop qualifies a local path) as a local path."""
    if path.startswith("file://"):
        return path[len("file://") :]
    return path[len("file:") :] if path.startswith("file:/") else path


class OutputStore:
    """File operations on the output directory through Hadoop's FileSystem (local, HDFS, s3a)."""

    def __init__(self, spark, output: str):
        self._jvm = spark._jvm
        self._Path = self._jvm.org.apache.hadoop.fs.Path
        fs = self._Path(output).getFileSystem(spark._jsc.hadoopConfiguration())
        checksummed = self._jvm.java.lang.Class.forName("org.apache.hadoop.fs.ChecksumFileSystem")
        # local files without Hadoop's .crc sidecars (which a file edited by hand then contradicts)
        self.fs = fs.getRawFileSystem() if checksummed.isInstance(fs) else fs
        self.output = output.rstrip("/")

    def path(self, *parts: str):
        return self._Path("/".join([self.output, *parts]))

    def exists(self, *parts: str) -> bool:
        return bool(self.fs.exists(self.path(*parts)))

    def is_file(self, *parts: str) -> bool:
        p = self.path(*parts)
        return bool(self.fs.exists(p) and self.fs.getFileStatus(p).isFile())

    def list(self, *parts: str) -> list[str]:
        p = self.path(*parts)
        if not self.fs.exists(p):
            return []
        return sorted(str(s.getPath().getName()) for s in self.fs.listStatus(p))

    def delete(self, *parts: str) -> None:
        self.fs.delete(self.path(*parts), True)

    def mkdirs(self, *parts: str) -> None:
        self.fs.mkdirs(self.path(*parts))

    def rename(self, src: tuple[str, ...], dst: tuple[str, ...]) -> None:
        if not self.fs.rename(self.path(*src), self.path(*dst)):
            raise OSError(f"rename failed: {'/'.join(src)} -> {'/'.join(dst)}")

    def write_text(self, text: str, *parts: str) -> None:
        out = self.fs.create(self.path(*parts), True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()

    def read_text(self, *parts: str) -> str:
        return self.read_bytes(*parts).decode("utf-8")

    def read_bytes(self, *parts: str) -> bytes:
        stream = self.fs.open(self.path(*parts))
        try:
            buf = self._jvm.java.io.ByteArrayOutputStream()
            self._jvm.org.apache.hadoop.io.IOUtils.copyBytes(stream, buf, 65536, False)
            return bytes(buf.toByteArray())
        finally:
            stream.close()

    def write_bytes(self, data: bytes, *parts: str) -> None:
        out = self.fs.create(self.path(*parts), True)
        try:
            out.write(bytearray(data))
        finally:
            out.close()

    def read_range(self, offset: int, length: int, *parts: str) -> bytes:
        """``length`` bytes from ``offset`` of a file (fewer at its end)."""
        stream = self.fs.open(self.path(*parts))
        try:
            stream.seek(offset)
            return bytes(stream.readNBytes(length))  # a byte[] result crosses py4j as one value
        finally:
            stream.close()

    def length(self, *parts: str) -> int:
        """A file's length in bytes."""
        return int(self.fs.getFileStatus(self.path(*parts)).getLen())

    def files(self, *parts: str) -> list[tuple[str, int]]:
        """``(name, length)`` of the files (not directories) directly under a directory."""
        return [(name, length) for name, length, _mtime in self.stamps(*parts)]

    def stamps(self, *parts: str) -> list[tuple[str, int, int]]:
        """``(name, length, modification time in ms)`` of the files directly under a directory."""
        p = self.path(*parts)
        if not self.fs.exists(p):
            return []
        return sorted(
            (str(st.getPath().getName()), int(st.getLen()), int(st.getModificationTime()))
            for st in self.fs.listStatus(p)
            if st.isFile()
        )

    def uri(self, *parts: str) -> str:
        """The qualified URI of a path under the root (as Spark's readers and writers take it)."""
        return str(self.fs.makeQualified(self.path(*parts)).toString())

    def walk(self, *parts: str) -> list[str]:
        """The paths (relative to the root, ``/``-separated) of every file under a directory."""
        p = self.path(*parts)
        if not self.fs.exists(p):
            return []
        root = str(self.fs.makeQualified(self.path()).toUri().getPath()).rstrip("/") + "/"
        files = self.fs.listFiles(p, True)
        out = []
        while files.hasNext():
            path = str(files.next().getPath().toUri().getPath())
            out.append(path[len(root) :] if path.startswith(root) else path)
        return sorted(out)


class LocalOutputStore:
    """The same operations as :class:`OutputStore` with the os module, for local paths (the outputs
    and inputs of every command: extraction tables, corpora, exports).

    Through py4j and Hadoop's local filesystem each operation is a call into the JVM, and Hadoop
    without its native library starts a process for some of them: ``chmod`` for each file it
    creates, ``ls -ld`` for each file a recursive listing returns (about 4.5 ms of CPU each).
    Moving a batch's part files is many small renames: tens of milliseconds each through Hadoop's
    checksummed local filesystem, microseconds with ``os.rename``.
    """

    def __init__(self, output: str):
        self.output = local_path(output).rstrip("/") or "/"

    def local(self, *parts: str) -> str:
        return os.path.join(self.output, *parts)

    def exists(self, *parts: str) -> bool:
        return os.path.exists(self.local(*parts))

    def is_file(self, *parts: str) -> bool:
        return os.path.isfile(self.local(*parts))

    def list(self, *parts: str) -> list[str]:
        path = self.local(*parts)
        return sorted(os.listdir(path)) if os.path.isdir(path) else []

    def delete(self, *parts: str) -> None:
        """Remove a file or folder under the root; a symbolic link in it is removed, not what it
        points at.  The root itself, when it is a link (an output kept on another disk), is
        emptied and stays a link."""
        path = self.local(*parts)
        if not parts and os.path.islink(path) and os.path.isdir(path):
            for entry in os.listdir(path):
                self.delete(entry)
        elif os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)

    def mkdirs(self, *parts: str) -> None:
        os.makedirs(self.local(*parts), exist_ok=True)

    def rename(self, src: tuple[str, ...], dst: tuple[str, ...]) -> None:
        os.rename(self.local(*src), self.local(*dst))

    def write_text(self, text: str, *parts: str) -> None:
        self.write_bytes(text.encode("utf-8"), *parts)

    def write_bytes(self, data: bytes, *parts: str) -> None:
        """Written to ``NAME.tmp``, synced, then renamed over ``NAME``: a file is either whole or absent."""
        path = self.local(*parts)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:  # a full disk: leave no half-written file behind, name the file
            with contextlib.suppress(OSError):
                os.remove(tmp)
            if exc.filename is None:
                raise OSError(exc.errno, exc.strerror, path) from exc
            raise
        os.replace(tmp, path)  # atomic: a marker is either complete or absent

    def read_text(self, *parts: str) -> str:
        with open(self.local(*parts), encoding="utf-8") as fh:
            return fh.read()

    def read_bytes(self, *parts: str) -> bytes:
        with open(self.local(*parts), "rb") as fh:
            return fh.read()

    def read_range(self, offset: int, length: int, *parts: str) -> bytes:
        """``length`` bytes from ``offset`` of a file (fewer at its end)."""
        with open(self.local(*parts), "rb") as fh:
            fh.seek(offset)
            return fh.read(length)

    def length(self, *parts: str) -> int:
        """A file's length in bytes."""
        return os.stat(self.local(*parts)).st_size

    def files(self, *parts: str) -> list[tuple[str, int]]:
        """``(name, length)`` of the files (not directories) directly under a directory."""
        return [(name, length) for name, length, _mtime in self.stamps(*parts)]

    def stamps(self, *parts: str) -> list[tuple[str, int, int]]:
        """``(name, length, modification time in ms)`` of the files directly under a directory
        (symbolic links followed, as Hadoop's listing follows them)."""
        path = self.local(*parts)
        if not os.path.isdir(path):
            return []
        out = []
        with os.scandir(path) as entries:
            for entry in entries:
                with contextlib.suppress(FileNotFoundError):  # (removed since the listing)
                    if entry.is_file():
                        st = entry.stat()
                        out.append((entry.name, st.st_size, st.st_mtime_ns // 1_000_000))
        return sorted(out)

    def uri(self, *parts: str) -> str:
        """The qualified URI of a path under the root, as Hadoop qualifies a local path
        (``file:/abs/path``; Spark's readers and writers take it)."""
        return "file:" + os.path.abspath(self.local(*parts))

    def walk(self, *parts: str) -> list[str]:
        """The paths (relative to the root, ``/``-separated) of every file under a directory
        (symbolic links to folders followed, as Hadoop's recursive listing follows them)."""
        top = self.local(*parts)
        out = []
        seen = {os.path.realpath(top)}
        for folder, folders, names in os.walk(top, followlinks=True):
            # (each real folder once: a link to a folder above it would loop)
            inside = [(f, os.path.realpath(os.path.join(folder, f))) for f in folders]
            folders[:] = [f for f, real in inside if real not in seen]
            seen.update(real for _, real in inside)
            rel = os.path.relpath(folder, self.output)
            out += [name if rel == "." else f"{rel}/{name}".replace(os.sep, "/") for name in names]
        return sorted(out)


#: Either store: the os module's for local paths, Hadoop's FileSystem for the others.
Store = OutputStore | LocalOutputStore


def local_store(path: str) -> LocalOutputStore | None:
    """A store on a local ``path`` without Spark (checks before the JVM starts); None for a remote one."""
    return None if is_remote(path) else LocalOutputStore(path)


#: ``file:`` URIs the os module's store takes: ``file:/path`` (as Hadoop qualifies a local path)
#: and ``file:///path``; other forms (``file://host/...``, ``file:relative``) go to Hadoop, which
#: reads or refuses them as it always did.
_LOCAL_FILE_URI = re.compile(r"^file:(/|///)(?!/)")


def resolves_locally(spark, path: str) -> bool:
    """Whether Spark and Hadoop would read ``path`` from the local disk: a ``file:`` URI of
    :data:`_LOCAL_FILE_URI`'s forms, or a path without a scheme when Hadoop's default filesystem
    (``fs.defaultFS``, HDFS on most clusters) is the local one.  An empty path is not local (Hadoop
    refuses it)."""
    if not path:
        return False
    if _SCHEME.match(path):
        return bool(_LOCAL_FILE_URI.match(path))
    default = str(spark._jsc.hadoopConfiguration().get("fs.defaultFS", "file:///"))
    return default.startswith("file:")


def store_of(spark, path: str) -> Store:
    """The store of a path the corpus commands read or write, resolved as Spark resolves it:
    :class:`LocalOutputStore` where it is on the local disk (:func:`resolves_locally`), Hadoop's
    FileSystem (:class:`OutputStore`) everywhere else."""
    return LocalOutputStore(path) if resolves_locally(spark, path) else OutputStore(spark, path)


def output_store(spark, output: str) -> Store:
    """The extraction job's output store: :class:`LocalOutputStore` for a path without a scheme or
    a ``file:`` URI (its Arrow writer writes there from every worker), Hadoop's FileSystem
    (:class:`OutputStore`) for every other scheme."""
    return local_store(output) or OutputStore(spark, output)


#: Every path contentx writes in an output directory (``fnmatch`` patterns, one per ``/``-separated
#: segment; ``**`` matches whatever lies below): the extraction table of ``contentx run`` and the
#: corpus of ``contentx corpus`` and ``select``.  A command that writes another layout adds its
#: paths here, so that ``--overwrite`` may replace its output (:func:`check_owned`).
OWNED_PATHS = (
    # the extraction table (:func:`commit_batch`)
    "method=*/b*.parquet",
    "_contentx/**",
    # the corpus (contentx_udf.corpus.job): Spark's directories, the report, the commit marker
    *(
        f"{folder}/{name}"
        for folder in ("documents", "signals", "texts")
        for name in ("part-*", "_SUCCESS", ".*.crc")
    ),
    "_staging/**",
    # the dataset card (corpus, select, export) and an export's files (contentx_udf.corpus.export)
    "data/train-*-of-*",
    "data/[0-9]*.ds*",
    # the files written whole through a store (:meth:`LocalOutputStore.write_bytes`), and the
    # ``NAME.tmp`` that a run killed while writing one leaves
    *(
        f"{name}{suffix}"
        for name in (
            "_summary.json",
            "signals/_build.json",
            "plots/*.png",
            "_report.json",
            "report.md",
            "_SUCCESS",
            "README.md",
            "_manifest.json",
        )
        for suffix in ("", ".tmp")
    ),
)
#: The paths of which one at least is in every output contentx wrote, finished or not (a killed
#: run leaves its staging area): the table's bookkeeping and summary, the corpus's.
OWNER_MARKERS = ("_contentx", "_summary.json", "_SUCCESS", "_report.json", "_staging", "_manifest.json")


def _owned(path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is one of :data:`OWNED_PATHS`."""
    segments = path.split("/")
    for pattern in OWNED_PATHS:
        parts = pattern.split("/")
        if parts[-1] == "**":
            head = parts[:-1]
            if len(segments) > len(head) and all(
                fnmatch.fnmatchcase(s, p) for s, p in zip(segments, head, strict=False)
            ):
                return True
        elif len(parts) == len(segments) and all(
            fnmatch.fnmatchcase(s, p) for s, p in zip(segments, parts, strict=True)
        ):
            return True
    return False


def foreign_files(store: OutputStore | LocalOutputStore) -> list[str]:
    """The paths under the store's root that contentx did not write (:data:`OWNED_PATHS`), a
    top-level folder of no contentx name counted even when empty; all of them when the root holds
    none of :data:`OWNER_MARKERS` (whatever it is, contentx did not write it)."""
    entries = store.list()
    files = store.walk()
    if entries and not any(marker in entries for marker in OWNER_MARKERS):
        return files or [f"{e}/" for e in entries]
    tops = {pattern.split("/")[0] for pattern in OWNED_PATHS}
    holding = {f.split("/")[0] for f in files}
    named = [e for e in entries if any(fnmatch.fnmatchcase(e, top) for top in tops)]
    empty = [f"{e}/" for e in entries if e not in holding and e not in named]
    return sorted([f for f in files if not _owned(f)] + empty)


def check_owned(store: OutputStore | LocalOutputStore, output: str, option: str = "--output") -> None:
    """Refuse (one :class:`UserError` line naming a foreign file) to replace or add to an output
    directory that holds anything contentx did not write; nothing is touched.  Every command that
    writes a directory calls it before it deletes or writes anything there (``--overwrite``,
    ``--resume``) and again right before it replaces an old output at commit."""
    foreign = foreign_files(store)
    if foreign:
        more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
        raise UserError(
            f"{option} {output} holds files contentx did not write ({foreign[0]}{more}); "
            "nothing was touched: move them away or choose another directory"
        )


def check_local_output(output: str, replace: bool = False) -> None:
    """Early, Spark-free check of a local output path (remote ones are checked by Hadoop);
    ``replace`` (``--overwrite``, ``--resume``): an existing directory must be contentx's own
    (:func:`check_owned`)."""
    if not output.strip():  # (an unset variable: "" would name the working directory or the root)
        raise UserError("--output is an empty path: give the directory to write")
    if is_remote(output):
        return
    local = local_path(output)
    if os.path.isfile(local):
        raise UserError(f"output path is a file, not a directory: {output}")
    if replace and os.path.isdir(local):
        check_owned(LocalOutputStore(output), output)
    parent = os.path.dirname(os.path.abspath(local))
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if os.path.isfile(parent):
        raise UserError(f"output path lies under a file, not a directory: {parent}")
