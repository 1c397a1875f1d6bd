// The Swift examples of README.md, MIGRATION.md, Examples/HTTPBinClient/README.md, the DocC
// articles and the libraries' documentation comments are compiled in this target: the
// `DocExamples` plugin (Plugins/DocExamples) runs `DocExampleExtractor`
// (Sources/DocExampleExtractor) on each of them at build time, and a broken example fails
// `swift build --build-tests` with an error that names the document (or source file) and line.
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
//
//   or names a shared one in Contexts/: `<!-- example-context: GitHub -->`. Examples in
//   documentation comments get Contexts/SourceComments.swift. A type the document declares
//   itself replaces a context's type of the same name.
// - An example that needs RxMoya or ReactiveMoya is compiled only with that package trait
//   enabled (`swift build --build-tests --traits RxMoya,ReactiveMoya`): put
//   `<!-- example-trait: RxMoya -->` on the line before its block. The modules of the trait
//   are imported for it. The examples in Sources/RxMoya and Sources/ReactiveMoya are marked so.
// - An article whose examples need a package of their own (a generated OpenAPI client) names
//   it on a line `<!-- example-package: OpenAPIClient -->`: this target leaves the article out,
//   and that package's DocExamplesTests (Examples/OpenAPIClient) compiles it with the same plugin.
// - SwiftPM plans the plugin's work when the package changes shape: after adding a document,
//   touch Package.swift (CI always starts from a fresh clone).
