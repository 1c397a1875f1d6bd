/// One code snippet taken from a document.
struct CodeBlock {
    /// The lines, with the block's common indentation removed.
    let lines: [SourceLine]
    /// True for the hidden context: everything goes to file scope.
    let isContext: Bool
    /// The file the lines come from, when it is not the document (a shared context).
    let file: String?
    /// The package trait the block needs (`RxMoya`), if any: it is compiled only when that
    /// trait is enabled.
    var trait: String? = nil
    /// The block's tests are compiled but not run (`<!-- example-compile-only -->`): they need
    /// something the test run does not have, such as a recorded cassette or a real API.
    var isCompileOnly = false
}
