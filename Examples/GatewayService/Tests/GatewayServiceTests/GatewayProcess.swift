import Foundation
import Moya
import Synchronization
import Testing

/// The `GatewayService` program in a child process, in front of the test httpbin, on a free
/// port: what an orchestrator starts, and stops with a real `SIGTERM`.
///
/// `swift build --build-tests` and `swift test` build the program beside the test bundle, in the
/// same products folder.
final class GatewayProcess {
    private let process: Process
    /// The instant the process ended, and its status.
    private let exits: AsyncStream<(ContinuousClock.Instant, Int32)>
    /// What the program wrote to its standard error (its log), for a failing test's message.
    let logFile: URL
    /// Calls the gateway.
    let client: MoyaProvider<GatewayAPI>
    private let clientSession: Session

    private init(process: Process, exits: AsyncStream<(ContinuousClock.Instant, Int32)>, logFile: URL, port: Int) {
        self.process = process
        self.exits = exits
        self.logFile = logFile
        // Enough connections that no call of a test waits for another.
        clientSession = Session(configuration: .init(maximumConnectionsPerHost: 32))
        let base = URL(string: "http://127.0.0.1:\(port)")!
        client = MoyaProvider<GatewayAPI>(endpointClosure: GatewayAPI.endpoints(at: base), session: clientSession)
    }

    /// The program, from the folder this test bundle is in.
    static var executable: URL {
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("GatewayService")
    }

    /// Starts the program and returns once it listens.
    ///
    /// - Parameter environment: Added to this process's environment for the program.
    static func start(environment: [String: String] = [:]) async throws -> GatewayProcess {
        let upstream = try #require(testHTTPBin)
        let executable = executable
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "no \(executable.path): build the package's products (swift build --build-tests), not only the tests")
        let process = Process()
        process.executableURL = executable
        process.arguments = [upstream.absoluteString, "0"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("GatewayProcess-\(UUID().uuidString).log")
        try #require(FileManager.default.createFile(atPath: logFile.path, contents: nil), "cannot create \(logFile.path)")
        process.standardError = try FileHandle(forWritingTo: logFile)
        let output = Pipe()
        process.standardOutput = output

        let (exits, exitContinuation) = AsyncStream.makeStream(of: (ContinuousClock.Instant, Int32).self)
        process.terminationHandler = { process in
            exitContinuation.yield((ContinuousClock.now, process.terminationStatus))
            exitContinuation.finish()
        }
        // The port, from the line the program prints once it listens (nil if it ends first).
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let received = Received()
        output.fileHandleForReading.readabilityHandler = { handle in
            let part = handle.availableData
            guard !part.isEmpty else {
                handle.readabilityHandler = nil
                portContinuation.finish()
                return
            }
            let text = received.data.withLock { data in
                data.append(part)
                return String(decoding: data, as: UTF8.self)
            }
            let prefix = "GatewayService listening on http://127.0.0.1:"
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }), let port = Int(line.dropFirst(prefix.count)) {
                portContinuation.yield(port)
                portContinuation.finish()
            }
        }
        try process.run()
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            process.waitUntilExit()
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            throw GatewayProcessError(description: "GatewayService ended before it listened (status \(process.terminationStatus)):\n\(log)")
        }
        return GatewayProcess(process: process, exits: exits, logFile: logFile, port: port)
    }

    /// Whether the gateway has an upstream call in flight, from its `/metrics`.
    func upstreamCallInFlight() async throws -> Bool {
        RunningGateway.showsUpstreamCallInFlight(metrics: try await client.request(.metrics).mapString())
    }

    /// Sends the program `SIGTERM`, as an orchestrator stopping it does.
    func sendSIGTERM() {
        kill(process.processIdentifier, SIGTERM)
    }

    /// Waits until the program has ended: the instant it did, and its status.
    func waitForExit() async -> (instant: ContinuousClock.Instant, status: Int32)? {
        var iterator = exits.makeAsyncIterator()
        return await iterator.next()
    }

    /// The program's log so far.
    var log: String {
        (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
    }

    /// Kills the program if it still runs, and shuts the client's session down.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        try? FileManager.default.removeItem(at: logFile)
        let clientSession = clientSession
        _Concurrency.Task {
            try? await clientSession.shutdown()
        }
    }
}

/// What the program has written to its standard output so far.
private final class Received: Sendable {
    let data = Mutex(Data())
}

struct GatewayProcessError: Error, CustomStringConvertible {
    let description: String
}
