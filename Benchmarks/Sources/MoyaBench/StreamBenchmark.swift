import AsyncHTTPClient
import Foundation
import Moya
import NIOCore
import NIOPosix

/// `--only stream`: a large body read as it arrives through `MoyaProvider.stream(_:)` against
/// AsyncHTTPClient's own `HTTPClientResponse.body`, and the memory a slow consumer costs.
///
/// Throughput: each size (`--sizes`, 1024 MiB by default) is read `rounds` times by each
/// client, taking turns, counting the bytes of every chunk; the ratio printed is the
/// provider's throughput over AsyncHTTPClient's (median times; goal at least 0.95).
///
/// Memory: the same body is read by a consumer that takes at most about 64 MB/s (it sleeps 1 ms
/// after every 64 KiB), much slower than loopback delivers, so the stream's back pressure is what
/// keeps memory flat; the figure is the process's peak resident memory during the read over
/// its resident memory before it (goal at most 32 MiB). Both use the stream's default buffer of
/// 1 MiB.
enum StreamBenchmark {
    static func run(options: Options, base: URL) async throws {
        let session = Session(configuration: .init(timeoutIntervalForRequest: 300))
        let provider = MoyaProvider<BenchTarget>(session: session)
        let client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: HTTPClient.Configuration(timeout: .init(read: .seconds(300))))
        let rounds = max(3, options.rounds / 2)
        let sizes = options.transferSizesMiB == [512, 1024] ? [1024] : options.transferSizesMiB
        print("")
        print("Streamed bodies, \(rounds) alternating runs each, median time (goal: the provider at least 0.95x raw AsyncHTTPClient's throughput)")
        print(column("stream", 30) + column("raw AHC", 10) + column("Moya", 10) + column("throughput", 12) + "range")
        for sizeMiB in sizes {
            let size = sizeMiB << 20
            let path = "/bytes/\(size)"
            var moya: [Double] = []
            var raw: [Double] = []
            for round in 0..<rounds {
                for step in 0..<2 {
                    // `--clients moya` or `--clients ahc` runs one of them alone (to profile it).
                    let isMoya = (round + step) % 2 == 0
                    if let only = options.clients, !only.contains(isMoya ? "moya" : "ahc") { continue }
                    if isMoya {
                        moya.append(try await elapsedSeconds { try await moyaStream(provider, base: base, path: path, size: size) })
                    } else {
                        raw.append(try await elapsedSeconds { try await rawStream(client, url: base.absoluteString + path, size: size) })
                    }
                }
            }
            guard !moya.isEmpty, !raw.isEmpty, !options.perRound else {
                print("stream \(sizeMiB) MiB: raw AHC \(raw.map { format($0, 2) }), Moya \(moya.map { format($0, 2) })")
                continue
            }
            let ratios = zip(raw, moya).map { $0 / $1 }
            print(
                column("stream \(sizeMiB) MiB", 30) + column(format(Statistics.median(raw), 2) + " s", 10)
                    + column(format(Statistics.median(moya), 2) + " s", 10)
                    + column(format(Statistics.median(raw) / Statistics.median(moya), 3) + "x", 12)
                    + format(ratios.min() ?? .nan, 2) + "-" + format(ratios.max() ?? .nan, 2))
        }
        for sizeMiB in sizes where options.clients == nil {
            let growth = try await slowConsumerGrowth(provider, base: base, size: sizeMiB << 20)
            print(
                "slow consumer, \(sizeMiB) MiB at about 64 MB/s: peak resident memory grew by \(format(growth, 1)) MiB (goal: at most 32 MiB)")
        }
        try await client.shutdown()
        try await session.shutdown()
    }

    private static func moyaStream(_ provider: MoyaProvider<BenchTarget>, base: URL, path: String, size: Int) async throws {
        let stream = try await provider.stream(BenchTarget.get(base, path))
        var received = 0
        for try await chunk in stream.body {
            received += chunk.count
        }
        guard received == size else { throw BenchFailure(description: "Moya stream: \(received) bytes") }
    }

    private static func rawStream(_ client: HTTPClient, url: String, size: Int) async throws {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(300))
        var received = 0
        for try await buffer in response.body {
            received += buffer.readableBytes
        }
        guard received == size else { throw BenchFailure(description: "raw stream: \(received) bytes") }
    }

    /// Reads `size` bytes at about 64 MB/s; returns the peak resident memory's growth in MiB.
    private static func slowConsumerGrowth(_ provider: MoyaProvider<BenchTarget>, base: URL, size: Int) async throws -> Double {
        let before = residentMiB()
        let stream = try await provider.stream(BenchTarget.get(base, "/bytes/\(size)"))
        var received = 0
        var sinceSleep = 0
        var peak = before
        for try await chunk in stream.body {
            received += chunk.count
            sinceSleep += chunk.count
            if sinceSleep >= 64 << 10 {
                sinceSleep = 0
                try await _Concurrency.Task.sleep(nanoseconds: 1_000_000)
                if received % (16 << 20) < chunk.count { peak = max(peak, residentMiB()) }
            }
        }
        peak = max(peak, residentMiB())
        guard received == size else { throw BenchFailure(description: "slow stream: \(received) bytes") }
        return peak - before
    }

    /// The process's resident memory, in MiB (`VmRSS` in /proc/self/status).
    private static func residentMiB() -> Double {
        guard let status = ProcFile.read("/proc/self/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return .nan }
        return kilobytes / 1024
    }
}
