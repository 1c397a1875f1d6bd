/// What a top-level item of a block is.
enum ItemKind {
    case importDeclaration
    case typeDeclaration
    case function
    case variable
    case statement
}
