/// A top-level item of a block: a declaration or a statement, possibly several lines long.
struct Item {
    var lines: [SourceLine]
    var kind: ItemKind
}

extension Item {
    /// The index of the line that says what the item is: the first that is not blank, a comment
    /// or an attribute on a line of its own.
    var firstCodeLineIndex: Int? {
        lines.firstIndex {
            let trimmed = $0.text.trimmingCharacters(in: .whitespaces)
            return !trimmed.isEmpty && !trimmed.hasPrefix("//") && !isAttributeLine(trimmed)
        }
    }
}
