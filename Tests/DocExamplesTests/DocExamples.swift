// The Swift examples of README.md and of the DocC articles are compiled in this target: the
// `DocExamples` plugin (Plugins/DocExamples) runs `DocExampleExtractor`
// (Sources/DocExampleExtractor) on each document at build time, and a broken example fails
// `swift build --build-tests` with an error that names the document and line.
//
// Writing an example that compiles:
// - Every ```swift block is compiled, except a package manifest fragment (one that starts with
//   `// Package.swift`).
// - Types, extensions and imports go to file scope and are shared by the document's blocks;
//   variables and statements of a block run in a function of their own.
// - What an example assumes but does not show (a target enum, a provider) goes into a hidden
//   context at the top of the document, which neither GitHub nor DocC displays:
//
//       <!-- example-context
//       let provider = MoyaProvider<GitHub>()
//       -->
