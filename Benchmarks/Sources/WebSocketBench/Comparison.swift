import Foundation

/// The turns of every client over the rounds of one workload, and the figures the table shows:
/// each client's median, and Moya's ratio to the best of the others *in the same round*, whose
/// median and range are what the goals are checked against. (The machine's speed drifts by more
/// than the differences measured; within a round every client sees about the same machine.)
struct Comparison {
    /// What was measured, for the table.
    let title: String
    /// Each round's sample of each client, by the client's name.
    private(set) var rounds: [[String: EchoBlock.Sample]] = []

    init(title: String) {
        self.title = title
    }

    /// Adds one round's samples.
    mutating func append(_ round: [String: EchoBlock.Sample]) {
        rounds.append(round)
    }

    /// The median over the rounds of `figure` of `client`'s turns.
    func median(of client: String, _ figure: (EchoBlock.Sample) -> Double) -> Double? {
        let values = rounds.compactMap { $0[client].map(figure) }
        return Self.median(values)
    }

    /// Moya's `figure` over the best other client's in each round (the highest when `higherIsBetter`,
    /// else the lowest), or over `reference`'s when it is given: the median and the range over
    /// the rounds; `nil` without Moya or another client.
    func moyaRatio(
        _ figure: (EchoBlock.Sample) -> Double, higherIsBetter: Bool, reference: String? = nil
    ) -> (median: Double, low: Double, high: Double)? {
        let ratios = rounds.compactMap { round -> Double? in
            guard let moya = round["Moya"].map(figure) else { return nil }
            let others = round.filter { $0.key != "Moya" && (reference == nil || $0.key == reference) }.values.map(figure)
            guard let best = higherIsBetter ? others.max() : others.min() else { return nil }
            return moya / best
        }
        guard let median = Self.median(ratios), let low = ratios.min(), let high = ratios.max() else { return nil }
        return (median, low, high)
    }

    /// The client (other than Moya) whose median of `figure` is best.
    func bestOther(_ figure: (EchoBlock.Sample) -> Double, higherIsBetter: Bool) -> String? {
        let names = Set(rounds.flatMap(\.keys)).subtracting(["Moya"])
        let medians = names.compactMap { name in median(of: name, figure).map { (name, $0) } }
        return (higherIsBetter ? medians.max { $0.1 < $1.1 } : medians.min { $0.1 < $1.1 })?.0
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
