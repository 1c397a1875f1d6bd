import Foundation

/// Words that may precede the keyword that says what a declaration is.
let modifiers: Set<String> = [
    "public", "internal", "fileprivate", "private", "open", "package", "final", "indirect",
    "nonisolated", "static", "dynamic", "lazy", "weak", "unowned",
]

/// Splits a block into its top-level items.
func items(of block: CodeBlock) -> [Item] {
    var result: [Item] = []
    var scanner = DepthScanner()
    var pending: [SourceLine] = []  // comments and attributes waiting for their item
    var directiveDepth = 0
    var previous = ""  // the last line with code, to tell a wrapped line from a new item
    for line in block.lines {
        let trimmed = line.text.trimmingCharacters(in: .whitespaces)
        let startsAtTop = scanner.depth == 0 && directiveDepth == 0
        scanner.scan(line.text)
        if trimmed.hasPrefix("#if") {
            if startsAtTop {
                result.append(Item(lines: pending + [line], kind: .statement))
                pending = []
            } else {
                result[result.count - 1].lines.append(line)
            }
            directiveDepth += 1
            continue
        }
        if trimmed.hasPrefix("#endif") {
            directiveDepth -= 1
            result[result.count - 1].lines.append(line)
            if directiveDepth == 0 {
                result[result.count - 1].kind = kindOfDirectiveRegion(result[result.count - 1].lines)
            }
            continue
        }
        let code = trimmed.components(separatedBy: " //").first ?? trimmed
        defer { if !code.isEmpty, !code.hasPrefix("//") { previous = code } }
        let wrapsPrevious = [",", "=", "&&", "||", "->", "+"].contains { previous.hasSuffix($0) }
        let isContinuation =
            wrapsPrevious || trimmed.hasPrefix(".") || trimmed.hasPrefix("&&") || trimmed.hasPrefix("||")
            || trimmed.hasPrefix("?") || trimmed.hasPrefix(":") || trimmed.hasPrefix("+") || trimmed.hasPrefix("->")
        if !startsAtTop || (isContinuation && !result.isEmpty) {
            if result.isEmpty {
                pending.append(line)
            } else {
                result[result.count - 1].lines.append(contentsOf: pending + [line])
                pending = []
            }
            continue
        }
        if trimmed.isEmpty || trimmed.hasPrefix("//") || (isAttributeLine(trimmed) && scanner.depth == 0) {
            pending.append(line)
            continue
        }
        result.append(Item(lines: pending + [line], kind: kind(of: trimmed)))
        pending = []
    }
    if !pending.isEmpty {
        if result.isEmpty {
            result.append(Item(lines: pending, kind: .statement))
        } else {
            result[result.count - 1].lines.append(contentsOf: pending)
        }
    }
    return result
}

/// Whether a line holds nothing but an attribute, arguments included: `@MainActor`,
/// `@Suite(.mockServer(setup: { server in ... }))`.
func isAttributeLine(_ trimmed: String) -> Bool {
    guard trimmed.hasPrefix("@") else { return false }
    var depth = 0
    var index = trimmed.index(after: trimmed.startIndex)
    while index < trimmed.endIndex {
        let character = trimmed[index]
        if character == "(" {
            depth += 1
        } else if character == ")" {
            depth -= 1
            if depth == 0 { return trimmed[trimmed.index(after: index)...].trimmingCharacters(in: .whitespaces).isEmpty }
        } else if depth == 0 && !(character.isLetter || character.isNumber || character == "_" || character == ".") {
            return false
        }
        index = trimmed.index(after: index)
    }
    return depth == 0
}

/// What the line that starts an item declares.
func kind(of trimmed: String) -> ItemKind {
    var words = trimmed.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == "<" || $0 == ":" }).map(String.init)
    while let first = words.first, first.hasPrefix("@") || modifiers.contains(first) {
        words.removeFirst()
    }
    switch words.first ?? "" {
    case "import": return .importDeclaration
    case "enum", "struct", "class", "actor", "protocol", "extension", "typealias": return .typeDeclaration
    case "func": return .function
    case "let", "var": return .variable
    default: return .statement
    }
}

/// An `#if` region is an import when it holds only imports; otherwise it counts as what its
/// first item is.
func kindOfDirectiveRegion(_ lines: [SourceLine]) -> ItemKind {
    let inner = lines.map { $0.text.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty && !$0.hasPrefix("#") && !$0.hasPrefix("//") }
    if !inner.isEmpty, inner.allSatisfy({ $0.hasPrefix("import ") }) { return .importDeclaration }
    return inner.first.map(kind(of:)) ?? .statement
}
