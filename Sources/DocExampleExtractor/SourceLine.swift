/// A line of a document, with its 1-based line number.
struct SourceLine {
    let number: Int
    let text: String
}
