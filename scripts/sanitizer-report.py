#!/usr/bin/env python3
"""Prints, in a few dozen lines, what stopped a test run under a sanitizer.

    python3 scripts/sanitizer-report.py <log of swift test>

A sanitizer that finds an error stops the test process (`halt_on_error=1`) in the middle of a
report of a hundred frames or more, and only the end of CI's output may be kept: so the report's
head, which says what was found and where, is the part that gets lost. This prints, for each
report in the log: its first line, each access or location it names with its first frames in
the package's own words (demangled, shortened), and its SUMMARY line; then the tests that had
started and not ended when the process stopped, one of which was running the code reported.

`--self-test` checks it on three small logs of its own: a data race with its SUMMARY, a Swift
runtime trap inside the sanitizer's signal handler (a failed precondition), which ends with no
SUMMARY, and a leak whose own frame is deep in its stack.
"""

import re
import shutil
import subprocess
import sys

FRAMES_PER_SECTION = 10
SECTIONS_PER_REPORT = 8
WIDTH = 240

REPORT_START = re.compile(
    r"WARNING: ThreadSanitizer:|ERROR: AddressSanitizer:|ERROR: LeakSanitizer:|Sanitizer: CHECK failed|Sanitizer:DEADLYSIGNAL"
)
# What the Swift runtime prints before it traps (a failed precondition, a fatal error): under a
# sanitizer, the trap's stack then follows a "CHECK failed" line of the sanitizer's own.
RUNTIME_FAILURE = re.compile(r"Fatal error|Precondition failed|Assertion failed")
SECTION = re.compile(
    r"^\s*(Write|Read|Atomic|Previous|Location is|Mutex|Thread T\d+|Direct leak|Indirect leak"
    r"|READ of size|WRITE of size|freed by thread|previously allocated by thread"
    r"|0x[0-9a-f]+ is located|SUMMARY:)"
)
# A frame: its number, then (AddressSanitizer) its address, then its function, and where known
# its file and line, its module and offset, its build id. A C++ function's name has spaces.
FRAME = re.compile(r"^\s*#(\d+) (?:0x[0-9a-f]+ in )?(.*)$")
FRAME_TAIL = re.compile(r"(?: \([^()]*\+0x[0-9a-f]+\))?(?: \(BuildId: [0-9a-f]+\))?$")
FRAME_PLACE = re.compile(r" (/[^:]*:\d+(?::\d+)?|<null>|\S+\.(?:c|cpp|swift))$")
# A test's start and end in Swift Testing's output. The cases of a parameterized test have start
# lines of their own ("Test case passing ...") and no end: only the test's end is printed.
# Lines of tests running at once may be printed into each other, so they are looked for anywhere
# in a line.
STARTED = re.compile(r"◇ Test (?!case passing |run started)(.+?) started\.")
ENDED = re.compile(r"[✔✘━] Test (.+?) (?:with \d+ test cases? )?(?:passed|failed)(?: after| with|\.)")


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


def shown_frames(frames):
    """The frames of a section to print: its first ``FRAMES_PER_SECTION`` after the sanitizer's
    own, and then the first few of the project's own code (`Sources/`, `Tests/`), which for a
    leak are often deep in the stack."""
    frames = own_frames(frames)
    shown = frames[:FRAMES_PER_SECTION]
    project = [
        frame for frame in frames[FRAMES_PER_SECTION:] if ("/Sources/" in frame[2] or "/Tests/" in frame[2]) and "/checkouts/" not in frame[2]
    ]
    return shown + project[:4]


def own_frames(frames):
    """`frames` from the first that is not the sanitizer's or the crash handler's own: from the
    Swift runtime's trap (`_assertionFailure`, a fatal error) when there is one."""
    for index, (_, name, _) in enumerate(frames):
        if "_assertionFailure" in name or "fatalError" in name:
            return frames[index:]
    return [frame for frame in frames if not re.match(r"__(tsan|asan|lsan|sanitizer)[_:]", frame[1])]


def where(path):
    """The source file and line of a frame, without the folders before the package's own."""
    if not path.startswith("/"):
        return ""
    for marker in ("/checkouts/", "/Sources/", "/Tests/"):
        at = path.find(marker)
        if at >= 0:
            return " " + path[at + 1 :]
    return " " + path


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    if sys.argv[1] == "--self-test":
        return self_test()
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        report(sys.argv[1], [line.rstrip("\n") for line in log])
    return 0


def report(name, lines):
    """Prints the summary of the log `name`, whose lines are `lines`."""
    reports = []
    current = None
    for line in lines:
        if REPORT_START.search(line):
            if current is not None and not any(section["frames"] for section in current["sections"]):
                # A second line of the same report (a CHECK failed on another thread): one report.
                continue
            current = {"head": line.strip(), "sections": [{"title": "stack:", "frames": []}]}
            reports.append(current)
            continue
        if current is None:
            continue
        if SECTION.match(line):
            if not current["sections"][-1]["frames"] and current["sections"][-1]["title"] == "stack:":
                current["sections"].pop()
            current["sections"].append({"title": line.strip(), "frames": []})
            if line.strip().startswith("SUMMARY:"):
                current = None
            continue
        frame = FRAME.match(line)
        if frame and current["sections"]:
            frames = current["sections"][-1]["frames"]
            if len(frames) < 60:
                rest = FRAME_TAIL.sub("", frame.group(2))
                place = FRAME_PLACE.search(rest)
                name, place = (rest[: place.start()], place.group(1)) if place else (rest, "")
                frames.append((frame.group(1), name, place))

    failures = [line.strip() for line in lines if RUNTIME_FAILURE.search(line)]
    for failure in failures[-5:]:
        print(failure[:WIDTH])
    if not reports:
        print("no sanitizer report in", name)
    names = sorted({name for report in reports for s in report["sections"] for _, name, _ in s["frames"]})
    readable = demangle(names)
    for report in reports[:3]:
        print(report["head"][:WIDTH])
        # A leak report has a section per leaked block: the direct leaks (what nothing points
        # to any more) say where to look; the indirect ones are what those held.
        sections = sorted(report["sections"], key=lambda section: not section["title"].startswith("Direct leak"))
        for section in sections[:SECTIONS_PER_REPORT]:
            print("  " + section["title"][:WIDTH])
            for number, name, rest in shown_frames(section["frames"]):
                print(f"    #{number} {readable.get(name, name)}{where(rest)}"[:WIDTH])
        if len(sections) > SECTIONS_PER_REPORT:
            print(f"  ... and {len(sections) - SECTIONS_PER_REPORT} more sections")
    if len(reports) > 3:
        print(f"... and {len(reports) - 3} more reports")

    running = {}
    for line in lines:
        started = STARTED.search(line)
        if started:
            running[started.group(1)] = running.get(started.group(1), 0) + 1
            continue
        ended = ENDED.search(line)
        if ended and running.get(ended.group(1)):
            running[ended.group(1)] -= 1
    unfinished = [name for name, count in running.items() if count > 0]
    print(f"tests started and not ended when the process stopped ({len(unfinished)}):")
    for test in unfinished[:40]:
        print("  " + test[:WIDTH])


SAMPLE_RACE = """\
◇ Test first() started.
◇ Test second() started.
◇ Test "third" started.
◇ Test case passing 1 argument x → 1 to "third" started.
◇ Test case passing 1 argument x → "a✔ Test "third" with 2 test cases passed after 0.2 seconds.
✔ Test first() passed after 0.100 seconds.
==================
WARNING: ThreadSanitizer: data race (pid=1)
  Write of size 8 at 0x7b0400001234 by thread T3:
    #0 $s4Moya5AlphaC5writeyyF /src/Sources/Moya/Alpha.swift:10:5 (Tests.xctest+0x10) (BuildId: 1)
    #1 $s4Moya5AlphaC3runyyF /src/Sources/Moya/Alpha.swift:20:9 (Tests.xctest+0x20) (BuildId: 1)
  Previous read of size 8 at 0x7b0400001234 by thread T5:
    #0 $s4Moya5AlphaC4readSiyF /src/Sources/Moya/Alpha.swift:30:5 (Tests.xctest+0x30) (BuildId: 1)
SUMMARY: ThreadSanitizer: data race /src/Sources/Moya/Alpha.swift:10:5 in Alpha.write()
"""

SAMPLE_TRAP = """\
◇ Test uploads() started.
Checkouts/Pool.swift:502: Fatal error: A connection that we don't know was released?
ThreadSanitizer: CHECK failed: tsan_rtl.cpp:1076 "((thr->ignore_reads_and_writes)) > ((0))" (0x0, 0x0) (tid=2756)
    #0 __tsan::CheckUnwind() /llvm/tsan_rtl.cpp:696:21 (t+0xe264b) (BuildId: 4)
    #1 $ss17_assertionFailure__4file4line5flagss5NeverOs12StaticStringV_SSAHSus6UInt32VtF <null> (libswiftCore.so+0x2f9360)
    #2 $s4Pool8ReleasedyyF /x/checkouts/pool/State Machine/Pool.swift:502:17 (t+0xfc2c3) (BuildId: 4)

proxy-server: stopped
"""


SAMPLE_LEAK = """\
==516==ERROR: LeakSanitizer: detected memory leaks
  Indirect leak of 5248 byte(s) in 4 object(s) allocated from:
    #0 malloc /llvm/asan_malloc_linux.cpp:67:3 (t+0x1)
    #1 swift_allocObject (libswiftCore.so+0x2)
  Direct leak of 64 byte(s) in 1 object(s) allocated from:
    #0 malloc /llvm/asan_malloc_linux.cpp:67:3 (t+0x1)
    #1 swift_allocObject (libswiftCore.so+0x2)
    #2 f2 /x/checkouts/nio/A.swift:1:1 (t+0x3)
    #3 f3 /x/checkouts/nio/A.swift:2:1 (t+0x3)
    #4 f4 /x/checkouts/nio/A.swift:3:1 (t+0x3)
    #5 f5 /x/checkouts/nio/A.swift:4:1 (t+0x3)
    #6 f6 /x/checkouts/nio/A.swift:5:1 (t+0x3)
    #7 f7 /x/checkouts/nio/A.swift:6:1 (t+0x3)
    #8 f8 /x/checkouts/nio/A.swift:7:1 (t+0x3)
    #9 f9 /x/checkouts/nio/A.swift:8:1 (t+0x3)
    #10 f10 /x/checkouts/nio/A.swift:9:1 (t+0x3)
    #11 madeHere /src/Tests/MoyaTests/LeakTests.swift:12:5 (t+0x4)
SUMMARY: AddressSanitizer: 5312 byte(s) leaked in 5 allocation(s).
"""


def self_test():
    """Checks the summary of the three sample logs; prints what differs and returns 1 if any."""
    cases = [
        (
            "a data race",
            SAMPLE_RACE,
            [
                "WARNING: ThreadSanitizer: data race (pid=1)",
                "  Write of size 8 at 0x7b0400001234 by thread T3:",
                "Alpha.swift:10:5",
                "  Previous read of size 8 at 0x7b0400001234 by thread T5:",
                "SUMMARY: ThreadSanitizer: data race",
                "tests started and not ended when the process stopped (1):",
                "  second()",
            ],
        ),
        (
            "a trap with no SUMMARY",
            SAMPLE_TRAP,
            [
                "Fatal error: A connection that we don't know was released?",
                "ThreadSanitizer: CHECK failed",
                "#1 ",
                "_assertionFailure",
                "checkouts/pool/State Machine/Pool.swift:502:17",
                "  uploads()",
            ],
        ),
        (
            "a leak",
            SAMPLE_LEAK,
            ["ERROR: LeakSanitizer: detected memory leaks", "Tests/MoyaTests/LeakTests.swift:12:5", "SUMMARY: AddressSanitizer: 5312"],
        ),
    ]
    failures = 0
    for title, log, expected in cases:
        printed = report_of(log)
        missing = [text for text in expected if text not in printed]
        if missing:
            failures += 1
            print(f"self-test '{title}': missing {missing} in:\n{printed}")
    running = report_of(SAMPLE_RACE).split("stopped (1):")[-1]
    if "first()" in running or "third" in running:
        failures += 1
        print("self-test: a test that ended is listed as running:", running)
    print("sanitizer-report self-test:", "failed" if failures else "passed")
    return 1 if failures else 0


def report_of(log):
    """The summary of `log`, as text."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        report("sample", log.splitlines())
    return out.getvalue()


if __name__ == "__main__":
    sys.exit(main())
