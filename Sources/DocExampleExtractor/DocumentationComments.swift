import Foundation

/// The Markdown of a Swift file's documentation comments: each `///` line without its marker (and
/// one space after it), every other line blank, so that line numbers stay those of the file.
func documentationComments(of source: String) -> String {
    source.split(separator: "\n", omittingEmptySubsequences: false).map { line in
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        guard trimmed.hasPrefix("///") else { return "" }
        let text = trimmed.dropFirst(3)
        return String(text.first == " " ? text.dropFirst() : text)
    }.joined(separator: "\n")
}
