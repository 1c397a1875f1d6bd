import AsyncHTTPClient
import Foundation
import Moya
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--only transfer`: the time of large downloads and uploads through the provider, with a
/// progress block, against raw AsyncHTTPClient doing the same the way its documentation shows
/// (`FileDownloadDelegate` to a file; a file body streamed with `NonBlockingFileIO`).
///
/// Each size runs `rounds` times, the two clients taking turns, and the median time ratio is
/// printed. The files live in `/dev/shm` when it exists: on a disk, writing hundreds of MiB makes
/// the page cache's writeback part of every figure, and it comes in bursts (single runs of the
/// same code differed by up to 2×). Peak memory is `MoyaMemoryBenchmark`'s business (a figure per
/// process).
enum TransferBenchmark {
    static func run(options: Options, base: URL) async throws {
        // Files go to memory (/dev/shm) where there is one: on a disk, the page cache's writeback
        // comes in bursts that swamp the difference being measured.
        let shm = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        let parent = FileManager.default.isWritableFile(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
        let work = parent.appendingPathComponent("moya-bench-transfer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let session = Session(configuration: .init(timeoutIntervalForRequest: 300, temporaryDirectory: work.appendingPathComponent("staging")))
        let provider = MoyaProvider<BenchTarget>(callbackQueue: .global(), session: session)
        var configuration = HTTPClient.Configuration(timeout: .init(read: .seconds(300)))
        configuration.decompression = .enabled(limit: .ratio(100))
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        let rounds = max(3, options.rounds / 2)
        print("")
        print("Transfers, \(rounds) alternating runs each, files in \(parent.path), median time (goal: the provider at most 1.1x raw AsyncHTTPClient's time)")
        print(column("transfer", 30) + column("raw AHC", 10) + column("Moya", 10) + column("Moya / AHC", 12) + "range")
        for sizeMiB in options.transferSizesMiB {
            let size = sizeMiB << 20
            let source = work.appendingPathComponent("source.bin")
            try writeFile(at: source, size: size)
            let destination = work.appendingPathComponent("downloaded.bin")
            let downloadURL = base.appendingPathComponent("bytes/\(size)")
            var moya: [Double] = []
            var raw: [Double] = []
            for round in 0..<rounds {
                // Each round starts with the other client.
                for step in 0..<2 {
                    if (round + step) % 2 == 0 {
                        moya.append(
                            try await elapsedSeconds {
                                try await moyaDownload(provider, base: base, size: size, to: destination)
                            })
                    } else {
                        raw.append(try await elapsedSeconds { try await rawDownload(client, url: downloadURL, size: size, to: destination) })
                    }
                    try? FileManager.default.removeItem(at: destination)
                }
            }
            report("download \(sizeMiB) MiB", raw: raw, moya: moya, perRound: options.perRound)
            moya = []
            raw = []
            for round in 0..<rounds {
                for step in 0..<2 {
                    if (round + step) % 2 == 0 {
                        moya.append(try await elapsedSeconds { try await moyaUpload(provider, base: base, file: source, size: size) })
                    } else {
                        raw.append(try await elapsedSeconds { try await rawUpload(client, base: base, file: source, size: size) })
                    }
                }
            }
            report("uploadFile \(sizeMiB) MiB", raw: raw, moya: moya, perRound: options.perRound)
            try FileManager.default.removeItem(at: source)
        }
        try await client.shutdown()
        try await session.shutdown()
    }

    private static func report(_ name: String, raw: [Double], moya: [Double], perRound: Bool) {
        let ratios = zip(moya, raw).map { $0 / $1 }
        if perRound {
            for (index, (moya, raw)) in zip(moya, raw).enumerated() {
                print("  run \(index + 1): raw AHC \(format(raw, 2)) s, Moya \(format(moya, 2)) s")
            }
        }
        print(
            column(name, 30) + column(format(Statistics.median(raw), 2) + " s", 10) + column(format(Statistics.median(moya), 2) + " s", 10)
                + column(format(Statistics.median(moya) / Statistics.median(raw), 3) + "x", 12)
                + format(ratios.min() ?? .nan, 2) + "-" + format(ratios.max() ?? .nan, 2))
    }

    private static func writeFile(at url: URL, size: Int) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for _ in 0..<(size >> 20) { try handle.write(contentsOf: block) }
    }

    /// Sends `target` with a progress block and waits for the result.
    private static func send(_ provider: MoyaProvider<BenchTarget>, _ target: BenchTarget) async throws -> Moya.Response {
        let events = ProgressCounter()
        let result: UncheckedBox<Result<Moya.Response, MoyaError>> = await withCheckedContinuation { continuation in
            provider.request(target, progress: { _ in events.count += 1 }) { continuation.resume(returning: UncheckedBox($0)) }
        }
        guard events.count > 0 else { throw BenchFailure(description: "no progress events") }
        return try result.value.get()
    }

    private static func moyaDownload(_ provider: MoyaProvider<BenchTarget>, base: URL, size: Int, to destination: URL) async throws {
        let target = BenchTarget(
            baseURL: base, path: "/bytes/\(size)", method: .get,
            task: .downloadDestination { _, _ in (destination, [.removePreviousFile]) })
        _ = try await send(provider, target)
        let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
        guard (attributes[.size] as? NSNumber)?.intValue == size else { throw BenchFailure(description: "Moya download: wrong size") }
    }

    private static func rawDownload(_ client: HTTPClient, url: URL, size: Int, to destination: URL) async throws {
        let delegate = try FileDownloadDelegate(path: destination.path, reportProgress: { _, _ in })
        let progress = try await client.execute(request: HTTPClient.Request(url: url.absoluteString), delegate: delegate).get()
        guard progress.receivedBytes == size else { throw BenchFailure(description: "raw download: \(progress.receivedBytes) bytes") }
    }

    private static func moyaUpload(_ provider: MoyaProvider<BenchTarget>, base: URL, file: URL, size: Int) async throws {
        let response = try await send(provider, BenchTarget(baseURL: base, path: "/upload", method: .post, task: .uploadFile(file)))
        guard let report = try response.mapJSON() as? [String: Any], report["length"] as? Int == size else {
            throw BenchFailure(description: "Moya upload: bad report")
        }
    }

    private static func rawUpload(_ client: HTTPClient, base: URL, file: URL, size: Int) async throws {
        let fileIO = NonBlockingFileIO(threadPool: .singleton)
        let handle = try openForReading(file)
        defer { try? handle.close() }
        var request = try HTTPClient.Request(url: base.absoluteString + "/upload", method: .POST)
        request.body = .stream(contentLength: Int64(size)) { writer in
            fileIO.readChunked(
                fileHandle: handle, byteCount: size, chunkSize: 256 << 10, allocator: ByteBufferAllocator(),
                eventLoop: MultiThreadedEventLoopGroup.singleton.any()
            ) { chunk in
                writer.write(.byteBuffer(chunk))
            }
        }
        let response = try await client.execute(request: request).get()
        guard response.status == .ok, let body = response.body,
            let report = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any], report["length"] as? Int == size
        else {
            throw BenchFailure(description: "raw upload: bad response \(response.status)")
        }
    }

    /// Opens `file` as AsyncHTTPClient's documentation does (a blocking open, outside async code).
    private static func openForReading(_ file: URL) throws -> NIOFileHandle {
        try NIOFileHandle(_deprecatedPath: file.path)
    }

    /// Counts progress events; they arrive on the callback queue one at a time.
    private final class ProgressCounter: @unchecked Sendable {
        // Sendable: a request's progress events are delivered one after another on one serial
        // delivery queue, and the count is read after the completion, which comes after them.
        var count = 0
    }
}
