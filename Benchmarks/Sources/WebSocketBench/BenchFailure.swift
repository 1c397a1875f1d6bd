/// A failure of the benchmark itself (a client that got something else than its echo, say).
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}
