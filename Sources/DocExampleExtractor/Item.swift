/// A top-level item of a block: a declaration or a statement, possibly several lines long.
struct Item {
    var lines: [SourceLine]
    var kind: ItemKind
}
