/// `WebSocketBench`'s command line.
///
///     WebSocketBench [--only throughput|one|many|text|latency|large|large-text|memory[,...]]
///                    [--clients moya,wsclient,raw,batched] [--rounds 5] [--messages 20000]
///                    [--window 16] [--connections 100] [--latency-messages 2000]
///                    [--large-messages 12] [--large-window 2] [--memory-mib 1024]
///                    [--memory-window 4] [--port N] [--per-round]
///
/// and, for its own child processes, `--serve` and `--memory-client NAME --port N`.
struct BenchOptions {
    /// The parts to run: `one` and `many` (1 KiB binary messages over one connection and over
    /// ``connections``; `throughput` is both), `text` (1 KiB text messages over one connection),
    /// `latency` (1 KiB messages one at a time: each round trip), `large` and `large-text`
    /// (16 MiB binary and text messages) and `memory` (the 1 GiB conversation).
    static let everyPart: Set<String> = ["one", "many", "text", "latency", "large", "large-text", "memory"]
    var parts = everyPart
    /// The clients to compare, by their keys (`moya`, `wsclient`, `raw`, `batched`: the raw
    /// client that batches its writes): one alone is for profiling.
    var clients: [String] = ["moya", "wsclient", "raw", "batched"]
    /// Rounds: in each, every client takes one turn, in an order that rotates from round to round.
    var rounds = 5
    /// Messages of 1 KiB per turn (spread over the connections when there are many).
    var messages = 20_000
    /// Messages in flight per connection, for 1 KiB messages.
    var window = 16
    /// Connections of the many-connection run.
    var connections = 100
    /// 1 KiB messages per turn of the latency run, one at a time.
    var latencyMessages = 2_000
    /// 16 MiB messages per turn.
    var largeMessages = 12
    /// 16 MiB messages in flight.
    var largeWindow = 2
    /// MiB sent in the memory run.
    var memoryMebibytes = 1024
    /// 1 MiB messages in flight in the memory run.
    var memoryWindow = 4
    /// A server that is already running (`WebSocketBench --serve` started by hand, for `perf`);
    /// by default the benchmark starts its own.
    var port: Int?
    /// Print every round's figures.
    var perRound = false
    /// Be the echo server (a child of the benchmark).
    var serve = false
    /// Be the memory run of this client (a child of the benchmark).
    var memoryClient: String?

    /// Parses `arguments` (without the program's name).
    ///
    /// - Throws: On an unknown option or a missing or malformed value.
    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ option: String) throws -> String {
            guard let value = rest.popFirst() else { throw BenchFailure(description: "\(option) needs a value") }
            return value
        }
        func number(_ option: String) throws -> Int {
            let text = try value(option)
            guard let number = Int(text), number > 0 else { throw BenchFailure(description: "\(option): \"\(text)\" is not a positive number") }
            return number
        }
        while let option = rest.popFirst() {
            switch option {
            case "--only":
                parts = Set(try value(option).split(separator: ",").flatMap { $0 == "throughput" ? ["one", "many"] : [String($0)] })
            case "--clients": clients = try value(option).split(separator: ",").map(String.init)
            case "--rounds": rounds = try number(option)
            case "--messages": messages = try number(option)
            case "--window": window = try number(option)
            case "--connections": connections = try number(option)
            case "--latency-messages": latencyMessages = try number(option)
            case "--large-messages": largeMessages = try number(option)
            case "--large-window": largeWindow = try number(option)
            case "--memory-mib": memoryMebibytes = try number(option)
            case "--memory-window": memoryWindow = try number(option)
            case "--port": port = try number(option)
            case "--per-round": perRound = true
            case "--serve": serve = true
            case "--memory-client": memoryClient = try value(option)
            default: throw BenchFailure(description: "unknown option \(option)")
            }
        }
        let unknownParts = parts.subtracting(Self.everyPart)
        guard unknownParts.isEmpty else { throw BenchFailure(description: "unknown part \(unknownParts.sorted().joined(separator: ","))") }
    }
}
