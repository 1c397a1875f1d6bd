/// One line of the table: a figure of every client's turns, and the goal for Moya's ratio to
/// the best other client's, if there is one.
struct Figure {
    /// How the line is labelled.
    let name: String
    /// The figure of one turn.
    let value: (EchoBlock.Sample) -> Double
    /// Decimals shown.
    let digits: Int
    /// Whether a higher figure is the better one (messages per second) or a lower one (CPU time).
    let higherIsBetter: Bool
    /// The bound Moya's ratio must meet (at least it when `higherIsBetter`, else at most).
    let goal: Double?
    /// The client Moya's ratio is taken against, by name; `nil` for the best of the others.
    var reference: String? = nil
}
