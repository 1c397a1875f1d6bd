/// Echo through one connection with a bounded number of messages in flight: pipelined, as a
/// client that streams would send, but never more than `window` messages ahead of the echoes.
///
/// A sender task sends the connection's message `count` times; the reader counts the echoes and
/// gives the sender one credit for each, so that at most `window` messages are sent and not yet
/// echoed. Every client is driven by this same code, credits included.
enum EchoConversation {
    /// Sends `count` messages of `size` bytes through `connection` with at most `window` in
    /// flight, and returns once every echo has been read; with `roundTrips`, notes when each
    /// message left and when its echo came back.
    ///
    /// - Throws: If the connection fails or ends early, or an echo has another size.
    static func run(_ connection: any EchoConnection, count: Int, size: Int, window: Int, roundTrips: RoundTripLog? = nil) async throws {
        let credits = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var permits = credits.stream.makeAsyncIterator()
                for sent in 0..<count {
                    if sent >= window {
                        guard await permits.next() != nil else { return }
                    }
                    roundTrips?.sending()
                    try await connection.send()
                }
            }
            group.addTask {
                defer { credits.continuation.finish() }
                for received in 0..<count {
                    guard let echoed = try await connection.receive() else {
                        throw BenchFailure(description: "the connection ended after \(received) of \(count) echoes")
                    }
                    guard echoed == size else {
                        throw BenchFailure(description: "an echo of \(echoed) bytes instead of \(size)")
                    }
                    roundTrips?.echoed(received)
                    credits.continuation.yield()
                }
            }
            // The first failure leaves the group, which cancels the other task.
            while try await group.next() != nil {}
        }
    }
}
