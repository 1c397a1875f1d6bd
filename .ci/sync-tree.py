#!/usr/bin/env python3
"""Makes DEST hold exactly the files of the git work tree SOURCE, rewriting only what differs.

    python3 .ci/sync-tree.py SOURCE DEST [EXTRA ...]

The files are the ones git reports for SOURCE (tracked, and untracked but not ignored), plus the
EXTRA paths given relative to SOURCE (ignored files that a build reads, such as Package.resolved).
A file whose bytes and mode already match in DEST is left alone, so its modification time is
kept; a file that differs is written anew; a file or folder in DEST that SOURCE does not have is
removed.

.ci/run uses it for the sanitizer builds, which it caches outside the clone: they build from a
copy at a fixed path, so that SwiftPM, which judges what to rebuild by path and modification
time, compiles again only what a change touched, wherever CI cloned the repository and however
new the clone's timestamps are. Prints how many files it wrote and removed.
"""

import os
import shutil
import stat
import subprocess
import sys


def tree_files(source, extras):
    listed = subprocess.run(
        ["git", "-C", source, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout
    names = {name for name in listed.decode().split("\0") if name}
    names.update(extras)
    # A tracked file deleted from the work tree is not part of it.
    return {name for name in names if os.path.lexists(os.path.join(source, name))}


def same(source_path, dest_path):
    try:
        source_info = os.lstat(source_path)
        dest_info = os.lstat(dest_path)
    except FileNotFoundError:
        return False
    if stat.S_IFMT(source_info.st_mode) != stat.S_IFMT(dest_info.st_mode):
        return False
    if stat.S_ISLNK(source_info.st_mode):
        return os.readlink(source_path) == os.readlink(dest_path)
    if source_info.st_size != dest_info.st_size or stat.S_IMODE(source_info.st_mode) != stat.S_IMODE(dest_info.st_mode):
        return False
    with open(source_path, "rb") as a, open(dest_path, "rb") as b:
        while True:
            chunk = a.read(1 << 20)
            if chunk != b.read(1 << 20):
                return False
            if not chunk:
                return True


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: sync-tree.py SOURCE DEST [EXTRA ...]")
    source, dest = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    names = tree_files(source, sys.argv[3:])
    os.makedirs(dest, exist_ok=True)

    written = 0
    for name in sorted(names):
        source_path, dest_path = os.path.join(source, name), os.path.join(dest, name)
        if same(source_path, dest_path):
            continue
        # Whatever stands in the way (a folder where a file now is, or the reverse) goes first.
        remove(dest_path)
        parent = os.path.dirname(dest_path)
        if os.path.lexists(parent) and not os.path.isdir(parent):
            os.unlink(parent)
        os.makedirs(parent, exist_ok=True)
        if os.path.islink(source_path):
            os.symlink(os.readlink(source_path), dest_path)
        else:
            shutil.copyfile(source_path, dest_path)
            shutil.copymode(source_path, dest_path)
        written += 1

    # Everything else under DEST goes, folders that end up empty included.
    keep_dirs = {""}
    for name in names:
        parent = os.path.dirname(name)
        while parent not in keep_dirs:
            keep_dirs.add(parent)
            parent = os.path.dirname(parent)
    removed = 0
    for root, dirs, files in os.walk(dest, topdown=True):
        relative = os.path.relpath(root, dest)
        relative = "" if relative == "." else relative
        for entry in files:
            name = os.path.join(relative, entry)
            if name not in names:
                os.unlink(os.path.join(root, entry))
                removed += 1
        for entry in list(dirs):
            name = os.path.join(relative, entry)
            path = os.path.join(root, entry)
            if os.path.islink(path):
                dirs.remove(entry)
                if name not in names:
                    os.unlink(path)
                    removed += 1
            elif name not in keep_dirs and name not in names:
                shutil.rmtree(path)
                dirs.remove(entry)
                removed += 1
    print(f"{len(names)} files: {written} written, {removed} removed")


if __name__ == "__main__":
    main()
