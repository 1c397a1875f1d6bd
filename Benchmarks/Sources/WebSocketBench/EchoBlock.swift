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

    /// What a turn measured.
    struct Sample {
        /// Messages echoed, over every connection.
        let messages: Int
        /// Wall-clock time, in seconds.
        let seconds: Double
        /// The process's CPU time (user + system), in seconds.
        let cpuSeconds: Double

        /// Echoed messages per second.
        var messagesPerSecond: Double { Double(messages) / seconds }
        /// CPU time per message, in microseconds.
        var cpuMicrosecondsPerMessage: Double { cpuSeconds * 1e6 / Double(messages) }
    }

    /// Runs one turn of `client` against the server at `port`.
    ///
    /// - Throws: If a connection cannot be opened or fails.
    func run(_ client: EchoClient, port: Int) async throws -> Sample {
        let size = self.size
        let opened = try await withThrowingTaskGroup(of: (any EchoConnection).self) { group in
            for _ in 0..<connections {
                group.addTask { try await client.connect(port, size) }
            }
            var opened: [any EchoConnection] = []
            for try await connection in group { opened.append(connection) }
            return opened
        }
        let count = messagesPerConnection
        let window = self.window
        let cpu = ResourceUsage.now()
        let start = DispatchTime.now()
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for connection in opened {
                    group.addTask { try await EchoConversation.run(connection, count: count, size: size, window: window) }
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
        return Sample(messages: connections * count, seconds: seconds, cpuSeconds: cpuSeconds)
    }

    private func close(_ connections: [any EchoConnection]) async {
        await withTaskGroup(of: Void.self) { group in
            for connection in connections {
                group.addTask { await connection.close() }
            }
        }
    }
}
