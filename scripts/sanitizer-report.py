#!/usr/bin/env python3
"""Prints, in a few dozen lines, what stopped a test run under a sanitizer.

    python3 scripts/sanitizer-report.py <log of swift test>

A sanitizer that finds an error stops the test process (`halt_on_error=1`) in the middle of a
report of a hundred frames or more, and only the end of CI's output may be kept: so the report's
head, which says what was found and where, is the part that gets lost. This prints, for each
report in the log: its first line, each access or location it names with its first frames in
the package's own words (demangled, shortened), and its SUMMARY line; then the tests that had
started and not ended when the process stopped, one of which was running the code reported.
"""

import re
import shutil
import subprocess
import sys

FRAMES_PER_SECTION = 10
WIDTH = 240

REPORT_START = re.compile(r"WARNING: ThreadSanitizer:|ERROR: AddressSanitizer:|ERROR: LeakSanitizer:")
SECTION = re.compile(
    r"^\s*(Write|Read|Atomic|Previous|Location is|Mutex|Thread T\d+|Direct leak|Indirect leak"
    r"|READ of size|WRITE of size|freed by thread|previously allocated by thread"
    r"|0x[0-9a-f]+ is located|SUMMARY:)"
)
FRAME = re.compile(r"^\s*#(\d+) (?:0x[0-9a-f]+ in )?(\S+)(.*)$")
STARTED = re.compile(r"^◇ Test (.+) started\.$")
ENDED = re.compile(r"^[✔✘] Test (.+?) (?:passed|failed)(?: after| with|\.)")


def demangle(names):
    """Demangles Swift symbols with the toolchain's `swift demangle`, when there is one."""
    swift = shutil.which("swift")
    if not swift or not names:
        return {name: name for name in names}
    try:
        result = subprocess.run(
            [swift, "demangle", "--simplified", "--compact"],
            input="\n".join(names),
            capture_output=True,
            text=True,
            timeout=60,
        )
        lines = result.stdout.splitlines()
        if result.returncode == 0 and len(lines) == len(names):
            return dict(zip(names, lines))
    except (OSError, subprocess.SubprocessError):
        pass
    return {name: name for name in names}


def where(rest):
    """The source file and line of a frame, without the folders before the package's own."""
    match = re.search(r"(/.+?:\d+(?::\d+)?)(?: \(|$)", rest)
    if not match:
        return ""
    path = match.group(1)
    for marker in ("/checkouts/", "/Sources/", "/Tests/"):
        at = path.find(marker)
        if at >= 0:
            return " " + path[at + 1 :]
    return " " + path


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        lines = [line.rstrip("\n") for line in log]

    reports = []
    current = None
    for line in lines:
        if REPORT_START.search(line):
            current = {"head": line.strip(), "sections": []}
            reports.append(current)
            continue
        if current is None:
            continue
        if SECTION.match(line):
            current["sections"].append({"title": line.strip(), "frames": []})
            if line.strip().startswith("SUMMARY:"):
                current = None
            continue
        frame = FRAME.match(line)
        if frame and current["sections"]:
            frames = current["sections"][-1]["frames"]
            if len(frames) < FRAMES_PER_SECTION:
                frames.append((frame.group(1), frame.group(2), frame.group(3)))

    if not reports:
        print("no sanitizer report in", sys.argv[1])
    names = sorted({name for report in reports for s in report["sections"] for _, name, _ in s["frames"]})
    readable = demangle(names)
    for report in reports[:3]:
        print(report["head"][:WIDTH])
        for section in report["sections"]:
            print("  " + section["title"][:WIDTH])
            for number, name, rest in section["frames"]:
                print(f"    #{number} {readable.get(name, name)}{where(rest)}"[:WIDTH])
    if len(reports) > 3:
        print(f"... and {len(reports) - 3} more reports")

    running = {}
    for line in lines:
        started = STARTED.match(line)
        if started:
            running[started.group(1)] = running.get(started.group(1), 0) + 1
            continue
        ended = ENDED.match(line)
        if ended and running.get(ended.group(1)):
            running[ended.group(1)] -= 1
    unfinished = [name for name, count in running.items() if count > 0]
    print(f"tests started and not ended when the process stopped ({len(unfinished)}):")
    for name in unfinished[:40]:
        print("  " + name[:WIDTH])
    return 0


if __name__ == "__main__":
    sys.exit(main())
