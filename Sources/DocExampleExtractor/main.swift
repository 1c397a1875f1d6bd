// DocExampleExtractor: turns the Swift code blocks of a Markdown document, or of the
// documentation comments (`///`) of a Swift file, into a Swift file that the `DocExamplesTests`
// target compiles, so that every example a reader sees is checked by the compiler.
//
//     DocExampleExtractor <document.md> <shared contexts directory> <output.swift>
//
// The `DocExamples` build tool plugin runs it for README.md and every article of the DocC
// catalogs. Rules (also in Tests/DocExamplesTests/DocExamples.swift):
//
// - Every ```swift block is compiled, except a package manifest fragment (a block that starts
//   with `// Package.swift` or imports PackageDescription).
// - Type declarations, extensions and imports go to file scope. Everything else in a block
//   (variables, statements, and functions when the block also has statements) goes into a
//   function of its own, so blocks do not see each other's local variables.
// - Types declared without an access level become `fileprivate`, so two documents can both
//   declare, say, `enum GitHub`.
// - A hidden context, in an HTML comment that starts with `<!-- example-context` and ends with
//   `-->`, is compiled at file scope before the blocks: it declares what the visible examples
//   assume (a target, a provider). Readers see neither it nor the comment. A one-line
//   `<!-- example-context: GitHub -->` names a context shared by several documents instead, a
//   file in Tests/DocExamplesTests/Contexts.
// - `--default-context Name` adds a shared context to every input that has an example; the
//   plugin uses it for the library's documentation comments. A type the input declares itself
//   replaces a context's type of the same name.
// - A block that needs a package trait (RxMoya, ReactiveMoya) is compiled only with that trait
//   enabled, inside `#if Trait`, with its modules imported: a one-line
//   `<!-- example-trait: Name -->` marks the next block of a Markdown document, and
//   `--trait Name` marks every block of the input (the plugin uses it for the trait-gated
//   libraries' documentation comments).
// - `#sourceLocation` points every line back to the document, so a compiler error names the
//   Markdown file and line.

import Foundation

let arguments = CommandLine.arguments
// The three paths, then options: `--default-context <name>` and `--trait <name>`.
var options: [String: String] = [:]
var optionIndex = 4
while optionIndex + 1 < arguments.count, ["--default-context", "--trait"].contains(arguments[optionIndex]) {
    options[arguments[optionIndex]] = arguments[optionIndex + 1]
    optionIndex += 2
}
guard arguments.count >= 4, optionIndex == arguments.count else {
    FileHandle.standardError.write(
        Data(
            """
            usage: DocExampleExtractor <document.md or file.swift> <shared contexts directory> <output.swift> \
                   [--default-context <name>] [--trait <name>]

            """.utf8))
    exit(2)
}
do {
    let input = URL(fileURLWithPath: arguments[1])
    var text = try String(contentsOf: input, encoding: .utf8)
    if input.pathExtension == "swift" {
        text = documentationComments(of: text)
    }
    let contexts = URL(fileURLWithPath: arguments[2], isDirectory: true)
    var blocks = try codeBlocks(in: text, sharedContexts: contexts)
    // A default context applies only where there is an example to compile.
    if let name = options["--default-context"], blocks.contains(where: { !$0.isContext }) {
        blocks = try codeBlocks(in: "<!-- example-context: \(name) -->", sharedContexts: contexts) + blocks
    }
    let generated = swiftFile(for: blocks, documentPath: input.path, trait: options["--trait"])
    let output = URL(fileURLWithPath: arguments[3])
    if (try? String(contentsOf: output, encoding: .utf8)) != generated {
        try generated.write(to: output, atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("DocExampleExtractor: \(error)\n".utf8))
    exit(1)
}
