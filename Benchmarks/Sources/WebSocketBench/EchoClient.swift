/// What the benchmark knows of a client: its name and how to open a connection.
struct EchoClient: Sendable {
    /// How it is named in the table and in `--clients`.
    let name: String
    /// Opens a connection to `/echo` of the server at `port` that sends `payload`'s messages.
    let connect: @Sendable (_ port: Int, _ payload: EchoPayload) async throws -> any EchoConnection
}

/// The benchmark's binary message: `count` pattern bytes, byte `i` being `i % 251`.
func patternBytes(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251) }
}
