import Dispatch

/// One timed turn of one client: `connections` connections opened (not timed), the same
/// conversation through each of them at once (timed: wall clock and the process's CPU), then
/// closed (not timed).
struct EchoBlock {
    /// Connections at once.
    let connections: Int
    /// Messages through each connection.
    let messagesPerConnection: Int
    /// The size of every message, in bytes.
    let size: Int
    /// Messages in flight per connection.
    let window: Int
    /// Whether the messages are text (else binary).
    var isText = false
    /// Whether each message's round trip is noted (for a window of 1: the latency of one
    /// message at a time).
    var measuresRoundTrips = false

    /// What a turn measured.
    struct Sample {
        /// Messages echoed, over every connection.
        let messages: Int
        /// Wall-clock time, in seconds.
        let seconds: Double
        /// The process's CPU time (user + system), in seconds.
        let cpuSeconds: Double
        /// Each message's round trip in microseconds, sorted, when they were noted.
        var roundTrips: [Double] = []

        /// Echoed messages per second.
        var messagesPerSecond: Double { Double(messages) / seconds }
        /// CPU time per message, in microseconds.
        var cpuMicrosecondsPerMessage: Double { cpuSeconds * 1e6 / Double(messages) }

        /// The round trip that `fraction` of the messages did not exceed (0.5: the median), in
        /// microseconds; 0 when none were noted.
        func roundTrip(percentile fraction: Double) -> Double {
            guard !roundTrips.isEmpty else { return 0 }
            let index = min(roundTrips.count - 1, Int((Double(roundTrips.count) * fraction).rounded(.up)) - 1)
            return roundTrips[max(0, index)]
        }
    }

    /// Runs one turn of `client` against the server at `port`.
    ///
    /// - Throws: If a connection cannot be opened or fails.
    func run(_ client: EchoClient, port: Int) async throws -> Sample {
        let size = self.size
        let payload = EchoPayload(size: size, isText: isText)
        let opened = try await withThrowingTaskGroup(of: (any EchoConnection).self) { group in
            for _ in 0..<connections {
                group.addTask { try await client.connect(port, payload) }
            }
            var opened: [any EchoConnection] = []
            for try await connection in group { opened.append(connection) }
            return opened
        }
        let count = messagesPerConnection
        let window = self.window
        let logs = opened.map { _ in measuresRoundTrips ? RoundTripLog() : nil }
        let cpu = ResourceUsage.now()
        let start = DispatchTime.now()
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (connection, log) in zip(opened, logs) {
                    group.addTask { try await EchoConversation.run(connection, count: count, size: size, window: window, roundTrips: log) }
                }
                try await group.waitForAll()
            }
        } catch {
            await close(opened)
            throw error
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        let cpuSeconds = ResourceUsage.now().seconds - cpu.seconds
        await close(opened)
        let roundTrips = logs.flatMap { $0?.microseconds ?? [] }.sorted()
        return Sample(messages: connections * count, seconds: seconds, cpuSeconds: cpuSeconds, roundTrips: roundTrips)
    }

    private func close(_ connections: [any EchoConnection]) async {
        await withTaskGroup(of: Void.self) { group in
            for connection in connections {
                group.addTask { await connection.close() }
            }
        }
    }
}
