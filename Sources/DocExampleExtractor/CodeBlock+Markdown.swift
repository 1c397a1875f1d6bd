import Foundation

/// Reads the Swift blocks and hidden contexts of a Markdown document, in document order. A
/// one-line `<!-- example-context: Name -->` names a shared context, the file `Name.swift` in
/// `sharedContexts`. A one-line `<!-- example-trait: Name -->` marks the next block (or hidden
/// context) as needing the package trait `Name`. A one-line `<!-- example-compile-only -->`
/// marks the next block's `@Test` functions as compiled but not run.
func codeBlocks(in text: String, sharedContexts: URL) throws -> [CodeBlock] {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var blocks: [CodeBlock] = []
    var index = 0
    var pendingTrait: String?
    var pendingCompileOnly = false
    // The block appended last takes the pending marks.
    func append(_ block: CodeBlock) {
        var block = block
        block.trait = pendingTrait
        block.isCompileOnly = pendingCompileOnly
        pendingTrait = nil
        pendingCompileOnly = false
        blocks.append(block)
    }
    while index < lines.count {
        let line = lines[index]
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("<!-- example-trait:"), trimmed.hasSuffix("-->") {
            let name = trimmed.dropFirst("<!-- example-trait:".count).dropLast(3).trimmingCharacters(in: .whitespaces)
            pendingTrait = name.isEmpty ? nil : name
            index += 1
            continue
        }
        if trimmed == "<!-- example-compile-only -->" {
            pendingCompileOnly = true
            index += 1
            continue
        }
        if trimmed.hasPrefix("<!-- example-context:"), trimmed.hasSuffix("-->") {
            let names = trimmed.dropFirst("<!-- example-context:".count).dropLast(3).split(separator: " ")
            for name in names {
                let file = sharedContexts.appendingPathComponent("\(name).swift")
                let contents = try String(contentsOf: file, encoding: .utf8)
                let lines = contents.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                    .map { SourceLine(number: $0.offset + 1, text: String($0.element)) }
                append(CodeBlock(lines: lines, isContext: true, file: file.path))
            }
            index += 1
            continue
        }
        if trimmed.hasPrefix("<!-- example-context") {
            var body: [SourceLine] = []
            var rest = String(trimmed.dropFirst("<!-- example-context".count))
            var cursor = index
            while true {
                if let end = rest.range(of: "-->") {
                    let before = String(rest[..<end.lowerBound])
                    if !before.trimmingCharacters(in: .whitespaces).isEmpty {
                        body.append(SourceLine(number: cursor + 1, text: before))
                    }
                    break
                }
                if cursor > index || !rest.trimmingCharacters(in: .whitespaces).isEmpty {
                    body.append(SourceLine(number: cursor + 1, text: rest))
                }
                cursor += 1
                guard cursor < lines.count else { break }
                rest = lines[cursor]
            }
            append(CodeBlock(lines: dedented(body), isContext: true, file: nil))
            index = cursor + 1
            continue
        }
        if let fence = openingFence(trimmed) {
            let indentation = line.prefix { $0 == " " }.count
            var body: [SourceLine] = []
            var cursor = index + 1
            while cursor < lines.count {
                let candidate = lines[cursor].trimmingCharacters(in: .whitespaces)
                if candidate.hasPrefix(fence.marker), candidate.allSatisfy({ $0 == fence.marker.first }) {
                    break
                }
                var content = Substring(lines[cursor])
                var removed = 0
                while removed < indentation, content.first == " " {
                    content = content.dropFirst()
                    removed += 1
                }
                body.append(SourceLine(number: cursor + 1, text: String(content)))
                cursor += 1
            }
            if fence.language == "swift", !isManifestFragment(body) {
                append(CodeBlock(lines: dedented(body), isContext: false, file: nil))
            }
            index = cursor + 1
            continue
        }
        index += 1
    }
    return blocks
}

/// The fence characters and language of a line that opens a fenced code block.
func openingFence(_ trimmed: String) -> (marker: String, language: String)? {
    for character in ["`", "~"] {
        let run = trimmed.prefix { String($0) == character }
        if run.count >= 3 {
            let language =
                trimmed.dropFirst(run.count)
                .trimmingCharacters(in: .whitespaces)
                .split(separator: " ").first.map(String.init) ?? ""
            return (String(run), language.lowercased())
        }
    }
    return nil
}

/// A fragment of a package manifest: it can only be checked by SwiftPM itself.
func isManifestFragment(_ lines: [SourceLine]) -> Bool {
    let first = lines.first { !$0.text.trimmingCharacters(in: .whitespaces).isEmpty }?.text ?? ""
    return first.trimmingCharacters(in: .whitespaces).hasPrefix("// Package.swift")
        || lines.contains { $0.text.contains("import PackageDescription") }
}

/// Removes the indentation common to every non-blank line.
func dedented(_ lines: [SourceLine]) -> [SourceLine] {
    let indents = lines.filter { !$0.text.trimmingCharacters(in: .whitespaces).isEmpty }
        .map { $0.text.prefix { $0 == " " }.count }
    let common = indents.min() ?? 0
    return lines.map { SourceLine(number: $0.number, text: String($0.text.dropFirst(min(common, $0.text.prefix { $0 == " " }.count)))) }
}
