import Foundation

/// Adds `fileprivate` to a declaration that has no access level of its own.
func fileprivateDeclaration(_ item: Item) -> Item {
    guard let index = item.firstCodeLineIndex else { return item }
    let line = item.lines[index]
    let trimmed = line.text.trimmingCharacters(in: .whitespaces)
    let words = trimmed.split(separator: " ").map(String.init)
    let accessLevels: Set<String> = ["public", "internal", "fileprivate", "private", "open", "package"]
    if words.contains(where: accessLevels.contains) { return item }
    // An extension that adds a conformance cannot carry an access level.
    if words.contains("extension"), trimmed.contains(":") { return item }
    if words.first == "typealias" || words.first == "import" { return item }
    var copy = item
    let indentation = line.text.prefix { $0 == " " }
    // Attributes written on the same line stay in front.
    var prefix: [String] = []
    var rest = words[...]
    while let first = rest.first, first.hasPrefix("@") {
        prefix.append(first)
        rest = rest.dropFirst()
    }
    copy.lines[index] = SourceLine(number: line.number, text: indentation + (prefix + ["fileprivate"] + rest).joined(separator: " "))
    return copy
}

/// The name of the type a declaration item declares (`enum GitHub` gives `GitHub`), if any;
/// extensions declare none.
func declaredTypeName(_ item: Item) -> String? {
    guard item.kind == .typeDeclaration, let index = item.firstCodeLineIndex else { return nil }
    let words = item.lines[index].text.trimmingCharacters(in: .whitespaces)
        .split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "<" || $0 == "{" || $0 == "=" }).map(String.init)
    guard let keyword = words.firstIndex(where: { ["enum", "struct", "class", "actor", "protocol", "typealias", "extension"].contains($0) }),
        words[keyword] != "extension", keyword + 1 < words.count
    else { return nil }
    return words[keyword + 1]
}

/// The names a `let` or `var` item declares, when it declares simple names.
func declaredNames(_ item: Item) -> [String] {
    guard let index = item.firstCodeLineIndex else { return [] }
    let words = item.lines[index].text.trimmingCharacters(in: .whitespaces).split(separator: " ").map(String.init)
    guard let keyword = words.firstIndex(where: { $0 == "let" || $0 == "var" }), keyword + 1 < words.count else { return [] }
    let name = words[keyword + 1].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
    return name.isEmpty || name == "_" ? [] : [String(name)]
}

/// The item with each of its `@Test` attributes disabled, so that the test is compiled but not
/// run. The attribute goes on a line of its own, so that the declaration after it still gets its
/// access level.
func disablingTests(_ item: Item) -> Item {
    var copy = item
    copy.lines = item.lines.flatMap { line -> [SourceLine] in
        let indentation = String(line.text.prefix { $0 == " " })
        let trimmed = line.text.dropFirst(indentation.count)
        guard trimmed.hasPrefix("@Test") else { return [line] }
        var rest = trimmed.dropFirst("@Test".count)
        var arguments = ""
        if rest.hasPrefix("(") {
            // The attribute's own arguments, up to the parenthesis that closes them.
            var depth = 0
            var end = rest.startIndex
            for index in rest.indices {
                if rest[index] == "(" { depth += 1 }
                if rest[index] == ")" { depth -= 1 }
                if depth == 0 {
                    end = index
                    break
                }
            }
            arguments = ", " + rest[rest.index(after: rest.startIndex)..<end]
            rest = rest[rest.index(after: end)...]
        } else if let first = rest.first, first != " " {
            return [line]  // a name that only starts with "@Test"
        }
        let attribute = indentation + "@Test(.disabled(\"a documentation example: compiled, not run\")\(arguments))"
        let declaration = rest.trimmingCharacters(in: .whitespaces)
        // Numbered one less, so that no `#sourceLocation` comes between it and the declaration.
        return [SourceLine(number: line.number - 1, text: attribute)]
            + (declaration.isEmpty ? [] : [SourceLine(number: line.number, text: indentation + declaration)])
    }
    return copy
}

/// Writes the lines of an item, each preceded by the document position it comes from.
func emit(_ item: Item, file: String, into output: inout String) {
    guard let first = item.lines.first else { return }
    output += "#sourceLocation(file: \"\(file)\", line: \(first.number))\n"
    var expected = first.number
    for line in item.lines {
        if line.number != expected {
            output += "#sourceLocation(file: \"\(file)\", line: \(line.number))\n"
        }
        output += line.text + "\n"
        expected = line.number + 1
    }
    output += "#sourceLocation()\n"
}

/// True when a name appears in the text as a whole word.
func mentions(_ text: String, _ name: String) -> Bool {
    var searchRange = text.startIndex..<text.endIndex
    while let range = text.range(of: name, range: searchRange) {
        let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
        let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
        let isWordCharacter: (Character?) -> Bool = { $0.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
        if !isWordCharacter(before), !isWordCharacter(after) { return true }
        searchRange = range.upperBound..<text.endIndex
    }
    return false
}

/// The modules a block that needs a package trait imports without saying so.
let traitModules: [String: [String]] = [
    "RxMoya": ["RxMoya", "RxSwift"],
    "ReactiveMoya": ["ReactiveMoya", "ReactiveSwift"],
]

/// What the blocks of one document add to the generated file: imports, file-scope declarations
/// and example functions. Blocks that need a package trait get a section of their own, compiled
/// only when that trait is enabled.
struct Section {
    var imports: Set<String> = []
    var fileScope = ""
    var functions = ""

    var text: String {
        imports.sorted().joined(separator: "\n") + "\n\n" + fileScope + functions
    }
}

/// The generated Swift file for the blocks of one document. `trait`, when given, is a package
/// trait that every block of the document needs.
func swiftFile(for blocks: [CodeBlock], documentPath: String, trait: String? = nil) -> String {
    var header = "// Generated by DocExampleExtractor from \(documentPath). Do not edit.\n"
    header += "// swift-format-ignore-file\n"
    var sections: [String: Section] = ["": Section(imports: ["import Foundation", "import Moya"])]
    // CombineMoya's own examples use its publishers without saying so.
    if documentPath.contains("/Sources/CombineMoya/") {
        sections[""]!.imports.insert("import CombineMoya")
        sections[""]!.fileScope += "#if canImport(Combine)\nimport Combine\n#else\nimport OpenCombine\n#endif\n"
    }
    // The test kit's examples use it and Swift Testing without saying so.
    if documentPath.contains("/Sources/MoyaTesting/") {
        sections[""]!.imports.formUnion(["import MoyaTesting", "import Testing"])
    }
    // A name the document declares itself wins over a context's declaration of it.
    let ownNames = Set(blocks.filter { !$0.isContext }.flatMap(items(of:)).compactMap(declaredTypeName))
    for (number, block) in blocks.enumerated() {
        let key = block.trait ?? trait ?? ""
        var section = sections[key] ?? Section(imports: Set((traitModules[key] ?? []).map { "import \($0)" }))
        defer { sections[key] = section }
        var blockItems = items(of: block)
        if block.isCompileOnly {
            blockItems = blockItems.map(disablingTests)
        }
        if block.isContext {
            blockItems.removeAll { declaredTypeName($0).map(ownNames.contains) ?? false }
        }
        let documentPath = block.file ?? documentPath
        let hasStatements = blockItems.contains { $0.kind == .statement || $0.kind == .variable }
        var body: [Item] = []
        for item in blockItems {
            switch item.kind {
            case .importDeclaration:
                let text = item.lines.map(\.text).joined(separator: "\n")
                if item.lines.count == 1 {
                    section.imports.insert(text.trimmingCharacters(in: .whitespaces))
                } else {
                    emit(item, file: documentPath, into: &section.fileScope)
                }
            case .typeDeclaration:
                emit(fileprivateDeclaration(item), file: documentPath, into: &section.fileScope)
            case .function where !hasStatements || block.isContext:
                emit(fileprivateDeclaration(item), file: documentPath, into: &section.fileScope)
            case .variable where block.isContext:
                emit(fileprivateDeclaration(item), file: documentPath, into: &section.fileScope)
            default:
                body.append(item)
            }
        }
        guard !body.isEmpty else { continue }
        let line = block.lines.first?.number ?? 0
        section.functions += "\n/// The example at \(documentPath), line \(line).\n"
        section.functions += "fileprivate func example\(number)Line\(line)() async throws {\n"
        for (index, item) in body.enumerated() {
            emit(item, file: documentPath, into: &section.functions)
            // A value the example names but does not use again would draw a warning.
            let later = body[(index + 1)...].flatMap(\.lines).map(\.text).joined(separator: "\n")
            for name in declaredNames(item) where item.kind == .variable && !mentions(later, name) {
                section.functions += "_ = \(name)\n"
            }
        }
        section.functions += "}\n"
    }
    var text = header + sections[""]!.text
    for key in sections.keys.sorted() where !key.isEmpty {
        text += "\n#if \(key)\n" + sections[key]!.text + "#endif\n"
    }
    return text
}
