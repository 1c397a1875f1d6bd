#!/usr/bin/env python3
"""Checks that the folders of Sources/Moya ("rooms") are layered: a file may name the types of
its own folder and of folders in lower layers only, never of a folder in its own layer or above.

A file "names" a type when the type's name appears in it outside comments and string literals,
and the type is declared at the top level of exactly one folder (a `struct`, `class`, `enum`,
`actor`, `protocol` or `typealias`). Extensions do not declare: `extension Session` in a low
folder would name `Session`, and is caught like any other use.

A file also uses a member when it writes `.name` (or `Type.name`) and `name` is declared as a
member in exactly one folder, where it is declared in an extension (of any type, ours or the
standard library's) or as a `static` member: `extension TargetType { var caseName }` in
`Model/` makes `target.caseName` in any file a use of `Model/`. A name that any other folder
declares too (as a member, a local or a parameter) is ambiguous and counts nowhere, and so are
the names in MEMBERS_IGNORED, which the standard library and Foundation declare as well.

The order is LAYERS below, lowest first; ARCHITECTURE.md draws the same table. A new folder must
be added to it. Usage: python3 scripts/check-layers.py [Sources/Moya] [--why]
Exit status 1 when a folder uses a folder that is not below it, or a folder is not in LAYERS.
`--self-test` checks the checker on small trees of its own: one that keeps the order, one whose
low folder names a type of a higher one, one with a folder no layer lists, and one whose use of
a higher type is only in a comment or a string.
"""
import os
import re
import sys

# Lowest first. Folders in one layer may not use each other.
LAYERS = [
    ["(root)", "Sync"],  # building blocks: locks, bounded caches, the version
    ["Headers"],  # HTTP's own vocabulary: header fields, the default headers, HTTP dates, the environment
    ["Model"],  # the request's vocabulary: targets, endpoints, tasks, responses, errors
    ["Encoding", "Mapping"],  # parameter encodings; reading a response's body as JSON, strings, images, Decodables
    ["Security", "Cookies", "Streaming", "Plugins", "Bodies"],  # parts a request is made with
    ["Metrics"],  # request metrics through swift-metrics
    ["Resilience"],  # the resilience policies' settings and state machines: budgets, breakers, limits, hedging
    ["Caching"],  # the HTTP cache: its rules, storages and counts (its storage has a breaker of Resilience's)
    ["Routing"],  # where a request goes: proxies, TLS bridge, clients per route
    ["ExchangeParts"],  # what every exchange of a session shares: stages, follow-ups, time limits, tracing
    ["HTTPExchange", "WebSockets"],  # the HTTP exchange (the AsyncHTTPClient adapter); the WebSocket protocol
    ["Session"],  # the public Session: configuration, lifecycle, where each request goes
    ["Interceptors", "Compatibility"],  # what sessions and providers are configured with
    ["Provider"],  # MoyaProvider and the request's flight
    ["AsyncAwait"],  # the async face of the provider
]

DECLARATION = re.compile(
    r"(?m)^(?:@[\w.]+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|package|internal|fileprivate|private|open|final|indirect|nonisolated)\s+)*"
    r"(?:struct|class|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)"
)
WORD = re.compile(r"\b[A-Z][A-Za-z0-9_]*\b")
# Names Swift itself declares too: a use of them says nothing about a folder.
IGNORED = {"Task"}
MEMBER = re.compile(
    r"\b(?:(static|class)\s+)?(?:(?:public|package|internal|fileprivate|private|open|final|override|mutating|nonmutating|nonisolated|convenience|lazy|weak|unowned|dynamic|@\w+(?:\([^)]*\))?)\s+)*"
    r"(?:func|var|let|case)\s+`?([a-z_][A-Za-z0-9_]*)"
)
# Any declared name: a member, a local, a parameter label; used to find ambiguous member names.
ANY_NAME = re.compile(r"\b(?:func|var|let|case)\s+`?([a-z_][A-Za-z0-9_]*)|[(,]\s*([a-z_][A-Za-z0-9_]*)\s*(?:[a-z_][A-Za-z0-9_]*\s*)?:")
# `receiver.name`, `Type.name` or an implicit `.name`: group 1 is the word before the dot, group 2
# a closing bracket or an optional's mark before it, group 3 the name.
MEMBER_USE = re.compile(r"(?:([A-Za-z0-9_]+)|([)\]?!>]))?\.([a-z_][A-Za-z0-9_]*)\b")
# Members the standard library and Foundation declare too: `.count` says nothing about a folder.
MEMBERS_IGNORED = {
    "count", "isEmpty", "first", "last", "description", "debugDescription", "value", "map", "flatMap", "compactMap",
    "filter", "reduce", "contains", "append", "insert", "remove", "removeAll", "init", "hash", "encode", "decode",
    "shared", "default", "none", "some", "success", "failure", "get", "set", "data", "url", "path", "host", "port",
    "scheme", "name", "min", "max", "zero", "now", "main", "global", "sorted", "joined", "split", "lowercased",
    "uppercased", "hasPrefix", "hasSuffix", "prefix", "suffix", "dropFirst", "dropLast", "startIndex", "endIndex",
    "makeIterator", "next", "underestimatedCount", "rawValue", "hashValue", "allCases", "withLock", "cancel",
    "isCancelled", "error", "result", "close", "write", "read", "start", "stop", "finish", "wait", "run",
}



def members(source):
    """The member names `source` (stripped) declares in top-level extensions, and as `static`
    or `class` members at depth 1 of a top-level type, each with "extension" or "static"."""
    owned = set()
    depth = 0
    kind = None
    top = re.compile(r"(?:^|\n)[^\n{}]*?\b(extension|struct|class|enum|protocol|actor)\b[^{}]*$")
    last = 0
    segment_start = 0
    for index, character in enumerate(source):
        if character not in "{}":
            continue
        segment = source[segment_start:index]
        if depth == 1 and kind is not None:
            for match in MEMBER.finditer(segment):
                if kind == "extension":
                    owned.add((match.group(2), "extension"))
                elif match.group(1):
                    owned.add((match.group(2), "static"))
        if character == "{":
            if depth == 0:
                match = top.search(source, last, index)
                kind = match.group(1) if match else None
                kind = "extension" if kind == "extension" else ("type" if kind else None)
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                kind = None
                last = index + 1
        segment_start = index + 1
    return owned


def strip(source):
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    source = re.sub(r"//[^\n]*", " ", source)
    source = re.sub(r'"""(.*?)"""', '""', source, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', source)


def read(root):
    files = {}
    for directory, _, names in os.walk(root):
        for name in names:
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            folder = relative.split(os.sep)[0] if os.sep in relative else "(root)"
            if folder.endswith(".docc"):
                continue
            with open(path, encoding="utf-8", errors="replace") as file:
                files[path] = (folder, strip(file.read()))
    return files


def check(root, why=False, quiet=False):
    """The number of problems in the tree at `root`, printed unless `quiet`."""
    files = read(root)
    rank = {folder: index for index, layer in enumerate(LAYERS) for folder in layer}
    declared = {}
    for folder, source in files.values():
        for match in DECLARATION.finditer(source):
            declared.setdefault(match.group(1), set()).add(folder)
    owner = {name: next(iter(folders)) for name, folders in declared.items() if len(folders) == 1 and name not in IGNORED}
    uses = {}
    for path, (folder, source) in files.items():
        for name in set(WORD.findall(source)):
            other = owner.get(name)
            if other and other != folder:
                uses.setdefault((folder, other), set()).add(f"{os.path.relpath(path, root)} names {name}")
    member_folders = {}
    for folder, source in files.values():
        for match in ANY_NAME.finditer(source):
            name = match.group(1) or match.group(2)
            member_folders.setdefault(name, set()).add(folder)
    member_owner = {}
    for folder, source in files.values():
        for name, kind in members(source):
            if name not in MEMBERS_IGNORED and member_folders.get(name, {folder}) == {folder}:
                # An extension's member is used through any receiver; a static one only as
                # `Type.name` or `.name` (an instance's `request.httpBody` is Foundation's).
                if member_owner.get(name, (None, None))[1] != "extension":
                    member_owner[name] = (folder, kind)
    for path, (folder, source) in files.items():
        for receiver, mark, name in set(MEMBER_USE.findall(source)):
            other, kind = member_owner.get(name, (None, None))
            if not other or other == folder:
                continue
            if kind == "static" and (mark or (receiver and not receiver[0].isupper())):
                continue
            uses.setdefault((folder, other), set()).add(f"{os.path.relpath(path, root)} uses the member {name}")
    say = (lambda text: None) if quiet else print
    failures = 0
    for folder in sorted({folder for folder, _ in files.values()}):
        if folder not in rank:
            say(f"layers: the folder {folder} is in no layer of scripts/check-layers.py")
            failures += 1
    for (user, used), reasons in sorted(uses.items()):
        if user in rank and used in rank and rank[used] >= rank[user]:
            where = "its own layer" if rank[used] == rank[user] else "a layer above it"
            say(f"layers: {user} uses {used}, which is in {where}:")
            for reason in sorted(reasons):
                say(f"    {reason}")
            failures += 1
    if why:
        for (user, used), reasons in sorted(uses.items()):
            say(f"{user} -> {used}: " + "; ".join(sorted(reasons)[:4]))
    return failures


def self_test():
    import tempfile

    cases = [
        ("keeps the order", {"Model/A.swift": "struct Alpha {}", "Session/B.swift": "struct Beta { let a: Alpha }"}, 0),
        ("a low folder names a higher type", {"Model/A.swift": "struct Alpha { let b: Beta }", "Session/B.swift": "struct Beta {}"}, 1),
        ("a folder in no layer", {"Model/A.swift": "struct Alpha {}", "Elsewhere/B.swift": "struct Beta {}"}, 1),
        (
            "an extension's member declared above is a use",
            {"Model/A.swift": "struct Alpha { func f(b: Int) { _ = b.doubled } }", "Session/B.swift": "extension Int { var doubled: Int { self * 2 } }"},
            1,
        ),
        (
            "a static member declared above is a use",
            {"Model/A.swift": "struct Alpha { let g = Gamma.make }", "Model/G.swift": "struct Gamma {}", "Session/B.swift": "extension Gamma { static let make = Gamma() }"},
            1,
        ),
        (
            "an instance's member of the same name as a static one is not",
            {"Model/A.swift": "struct Alpha { func f(r: Request) { _ = r.body } }", "Session/B.swift": "struct Beta { static let body = 1 }"},
            0,
        ),
        (
            "comments and strings do not count",
            {"Model/A.swift": 'struct Alpha { // Beta\n let text = "Beta" }', "Session/B.swift": "struct Beta {}"},
            0,
        ),
    ]
    failed = 0
    for name, tree, expected in cases:
        with tempfile.TemporaryDirectory() as root:
            for path, text in tree.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), "w", encoding="utf-8") as file:
                    file.write(text)
            found = check(root, quiet=True)
        if found != expected:
            print(f"layers self-test: {name}: {found} problem(s), expected {expected}")
            failed += 1
    print(f"layers self-test: {len(cases) - failed} of {len(cases)} cases as expected")
    return 1 if failed else 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    why = "--why" in sys.argv
    root = arguments[0] if arguments else "Sources/Moya"
    failures = check(root, why=why)
    rank = {folder: index for index, layer in enumerate(LAYERS) for folder in layer}
    if failures:
        print(f"layers: {failures} problem(s); the order is LAYERS in scripts/check-layers.py")
        return 1
    print(f"layers: {len(rank)} folders in {len(LAYERS)} layers, every use points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
