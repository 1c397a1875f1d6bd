// Moves a large file up and down through MoyaProvider against the in-process server (up as a
// file, a multipart form, a request's httpBodyStream with and without a Content-Length, and an
// AsyncSequence body), then the same transfers through raw AsyncHTTPClient, and reports peak
// resident memory of each against the program's idle baseline.
//
//     cd Benchmarks && swift run -c release MoyaMemoryBenchmark [size-in-MiB [name]]     (default 1024)
//
// With a name, only the transfers whose name contains it run (`httpBodyStream`, say).
//
// Goals: peak RSS at most 32 MiB above the idle baseline for every Moya transfer, and
// Moya's peak RSS within 1.2x of raw AsyncHTTPClient's for the same transfer.
import AsyncHTTPClient
import BenchServer
import Dispatch
import Foundation
import Moya
import NIOCore
import NIOPosix

struct TransferTarget: TargetType {
    let baseURL: URL
    let path: String
    let method: Moya.Method
    let task: Task
    var headers: [String: String]? { nil }
    var validationType: ValidationType { .successCodes }
}

/// Reads this process's resident set from /proc.
enum Memory {
    static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.split(separator: " ").dropFirst().first { Int($0) != nil }
            return digits.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }

    static var resident: Int { field("VmRSS") ?? 0 }
    static var highWaterMark: Int? { field("VmHWM") }

    /// Resets VmHWM to the current RSS (Linux 4.0+); returns whether that worked.
    static func resetHighWaterMark() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}

/// Samples RSS every few milliseconds while a transfer runs, as a cross-check of VmHWM.
final class Sampler: @unchecked Sendable {
    // Sendable: `peak` and `running` are only touched under `lock`.
    private let lock = NSLock()
    private var peak = 0
    private var running = true

    func start() {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                let rss = Memory.resident
                lock.withLock { peak = max(peak, rss) }
                usleep(2_000)
            }
        }
    }

    func stop() -> Int {
        lock.withLock {
            running = false
            return peak
        }
    }
}

func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

func run(_ provider: MoyaProvider<TransferTarget>, _ target: TransferTarget) -> Result<Moya.Response, MoyaError> {
    let done = DispatchSemaphore(value: 0)
    let result = Protected<Result<Moya.Response, MoyaError>>()
    _ = provider.request(target, callbackQueue: .global()) { outcome in
        result.set(outcome)
        done.signal()
    }
    done.wait()
    return result.get()!
}

/// A tiny lock box for handing the result over.
final class Protected<Value>: @unchecked Sendable {
    // Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value?
    init() {}
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func get() -> Value? { lock.withLock { value } }
}

let sizeMiB = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1024
/// Only the transfers whose name contains this run, when it is given.
let only = CommandLine.arguments.dropFirst(2).first
func runs(_ name: String) -> Bool { only.map { name.contains($0) } ?? true }
let size = sizeMiB << 20
let goal = 32 << 20

// The server runs in this process, on event loops of its own; it streams downloads from one small
// buffer and counts uploads without keeping them, so its memory does not grow with a transfer.
let server = try BenchServer.startBlocking()
let work = FileManager.default.temporaryDirectory.appendingPathComponent("moya-memory-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: work) }
let session = Session(configuration: .init(timeoutIntervalForRequest: 300, temporaryDirectory: work.appendingPathComponent("staging")))
let provider = MoyaProvider<TransferTarget>(session: session)

// The file to upload, written in 1 MiB blocks.
let source = work.appendingPathComponent("source.bin")
do {
    _ = FileManager.default.createFile(atPath: source.path, contents: nil)
    let handle = try FileHandle(forWritingTo: source)
    var block = [UInt8](repeating: 0, count: 1 << 20)
    for index in 0..<sizeMiB {
        for offset in stride(from: 0, to: block.count, by: 4096) { block[offset] = UInt8(truncatingIfNeeded: index &+ offset) }
        try handle.write(contentsOf: block)
    }
    try handle.close()
}

// Warm up: connections, buffers and code paths, then take the idle baseline.
_ = run(provider, TransferTarget(baseURL: server.baseURL, path: "/bytes/65536", method: .get, task: .requestPlain))
let smallFile = work.appendingPathComponent("small.bin")
try Data(count: 1 << 20).write(to: smallFile)
_ = run(provider, TransferTarget(baseURL: server.baseURL, path: "/upload", method: .post, task: .uploadFile(smallFile)))
_ = run(
    provider,
    TransferTarget(
        baseURL: server.baseURL, path: "/bytes/1048576", method: .get,
        task: .downloadDestination { _, _ in (work.appendingPathComponent("warm.bin"), [.removePreviousFile]) }))
Thread.sleep(forTimeInterval: 0.5)
let idle = Memory.resident
print("Moya memory benchmark: \(sizeMiB) MiB through MoyaProvider, in-process server on 127.0.0.1")
print("idle baseline RSS: \(mib(idle))")
print("")
print("transfer                  time      MiB/s    peak RSS     over idle   goal (≤ 32 MiB)")

var failures = 0
/// Peak RSS of each Moya transfer, by name, for the comparison with raw AsyncHTTPClient.
var moyaPeaks: [String: Int] = [:]

func column(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0) }

/// Runs `transfer` and returns its duration and peak RSS (VmHWM after a reset, cross-checked by
/// sampling).
func peakOf(_ transfer: () throws -> Void) rethrows -> (seconds: Double, peak: Int) {
    let hwmReset = Memory.resetHighWaterMark()
    let sampler = Sampler()
    sampler.start()
    let start = Date()
    defer { _ = sampler.stop() }
    try transfer()
    let seconds = Date().timeIntervalSince(start)
    let sampled = sampler.stop()
    return (seconds, max(sampled, hwmReset ? (Memory.highWaterMark ?? 0) : 0))
}

@MainActor func measure(
    _ name: String, _ target: TransferTarget, through sender: MoyaProvider<TransferTarget> = provider,
    send: ((MoyaProvider<TransferTarget>, TransferTarget) -> Result<Moya.Response, MoyaError>)? = nil, check: (Moya.Response) throws -> Void
) {
    guard runs(name) else { return }
    var result: Result<Moya.Response, MoyaError>?
    let (seconds, peak) = peakOf { result = send.map { $0(sender, target) } ?? run(sender, target) }
    moyaPeaks[name] = peak
    var status = peak - idle <= goal ? "met" : "MISSED"
    do {
        try check(try result!.get())
    } catch {
        status = "FAILED: \(error)"
        failures += 1
    }
    if peak - idle > goal { failures += 1 }
    let line =
        column(name, 26) + column(String(format: "%.1f s", seconds), 10) + column(String(format: "%.0f", Double(sizeMiB) / seconds), 9)
        + column(mib(peak), 13) + column(mib(peak - idle), 12) + status
    print(line)
}

struct CheckFailed: Error, CustomStringConvertible { let description: String }

func uploadCheck(expectedLength: Int?) -> (Moya.Response) throws -> Void {
    { response in
        guard let report = try response.mapJSON() as? [String: Any], let length = report["length"] as? Int else {
            throw CheckFailed(description: "no upload report")
        }
        if let expectedLength, length != expectedLength {
            throw CheckFailed(description: "server received \(length) bytes, expected \(expectedLength)")
        }
    }
}

measure(
    "uploadFile", TransferTarget(baseURL: server.baseURL, path: "/upload", method: .post, task: .uploadFile(source)),
    check: uploadCheck(expectedLength: size))
measure(
    "multipart (file part)",
    TransferTarget(
        baseURL: server.baseURL, path: "/upload", method: .post,
        task: .uploadMultipart([
            MultipartFormData(provider: .data(Data("benchmark".utf8)), name: "title"),
            MultipartFormData(provider: .file(source), name: "file"),
        ])), check: uploadCheck(expectedLength: nil))
// The file as a request's httpBodyStream (as URLSession takes it), set by the request closure, with
// and without a Content-Length header (chunked).
func bodyStreamProvider(withLength: Bool) -> MoyaProvider<TransferTarget> {
    MoyaProvider<TransferTarget>(
        requestClosure: { endpoint, done in
            do {
                var request = try endpoint.urlRequest()
                request.httpBodyStream = InputStream(url: source)
                if withLength {
                    request.setValue(String(size), forHTTPHeaderField: "Content-Length")
                }
                done(.success(request))
            } catch {
                done(.failure(error as? MoyaError ?? .underlying(error, nil)))
            }
        }, session: session)
}
for withLength in [true, false] {
    measure(
        withLength ? "httpBodyStream (length)" : "httpBodyStream (chunked)",
        TransferTarget(baseURL: server.baseURL, path: "/upload", method: .post, task: .requestPlain), through: bodyStreamProvider(withLength: withLength),
        check: uploadCheck(expectedLength: size))
}

/// `size` pattern bytes in chunks of 64 KiB, made as they are asked for.
struct PatternChunks: AsyncSequence, Sendable {
    let size: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: Int
        let chunk = [UInt8]((0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 % 251) })

        mutating func next() async -> ArraySlice<UInt8>? {
            guard remaining > 0 else { return nil }
            let count = Swift.min(remaining, chunk.count)
            remaining -= count
            return chunk[0..<count]
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: size) }
}

/// Sends `target` with `body` from a task, waiting for it on this thread (off the task pool).
func run(_ provider: MoyaProvider<TransferTarget>, _ target: TransferTarget, body: RequestBodyStream) -> Result<Moya.Response, MoyaError> {
    let done = DispatchSemaphore(value: 0)
    let result = Protected<Result<Moya.Response, MoyaError>>()
    _Concurrency.Task {
        do throws(MoyaError) {
            result.set(.success(try await provider.request(target, body: body)))
        } catch {
            result.set(.failure(error))
        }
        done.signal()
    }
    done.wait()
    return result.get()!
}
measure(
    "RequestBodyStream", TransferTarget(baseURL: server.baseURL, path: "/upload", method: .post, task: .requestPlain),
    send: { provider, target in run(provider, target, body: RequestBodyStream(PatternChunks(size: size), length: Int64(size))) },
    check: uploadCheck(expectedLength: size))

let destination = work.appendingPathComponent("downloaded.bin")
for withLength in [true, false] {
    let target = TransferTarget(
        baseURL: server.baseURL, path: "/bytes/\(size)", method: .get,
        task: .downloadParameters(
            parameters: ["chunk": 65_536, "length": withLength ? "true" : "false"], encoding: URLEncoding.queryString,
            destination: { _, _ in (destination, [.removePreviousFile]) }))
    measure(withLength ? "download (Content-Length)" : "download (chunked)", target) { _ in
        let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
        guard (attributes[.size] as? NSNumber)?.intValue == size else {
            throw CheckFailed(description: "downloaded file has the wrong size")
        }
    }
}

// The same transfers through raw AsyncHTTPClient, as its documentation shows them: a file
// streamed with NonBlockingFileIO, and FileDownloadDelegate. (It has no multipart encoder.)
var clientConfiguration = HTTPClient.Configuration(timeout: .init(read: .seconds(300)))
clientConfiguration.decompression = .enabled(limit: .ratio(100))
let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
let fileIO = NonBlockingFileIO(threadPool: .singleton)

func rawUpload() throws {
    let handle = try NIOFileHandle(_deprecatedPath: source.path)
    defer { try? handle.close() }
    var request = try HTTPClient.Request(url: server.baseURL.absoluteString + "/upload", method: .POST)
    request.body = .stream(contentLength: Int64(size)) { writer in
        fileIO.readChunked(
            fileHandle: handle, byteCount: size, chunkSize: 256 << 10, allocator: ByteBufferAllocator(),
            eventLoop: MultiThreadedEventLoopGroup.singleton.any()
        ) { chunk in
            writer.write(.byteBuffer(chunk))
        }
    }
    let response = try client.execute(request: request).wait()
    guard response.status == .ok, let body = response.body,
        let report = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
        report["length"] as? Int == size
    else {
        throw CheckFailed(description: "raw upload: bad response \(response.status)")
    }
}

func rawDownload(withLength: Bool) throws {
    let url = server.baseURL.absoluteString + "/bytes/\(size)?chunk=65536&length=\(withLength)"
    try? FileManager.default.removeItem(at: destination)
    let delegate = try FileDownloadDelegate(path: destination.path)
    let progress = try client.execute(request: HTTPClient.Request(url: url), delegate: delegate).wait()
    guard progress.receivedBytes == size else {
        throw CheckFailed(description: "raw download: \(progress.receivedBytes) bytes")
    }
}

print("")
print("The same transfers through raw AsyncHTTPClient (goal: Moya's peak RSS ≤ 1.2 × AsyncHTTPClient's)")
print("transfer                  time      MiB/s    peak RSS     over idle   Moya's peak / AHC's")
for (name, transfer) in [
    ("uploadFile", { try rawUpload() }),
    ("download (Content-Length)", { try rawDownload(withLength: true) }),
    ("download (chunked)", { try rawDownload(withLength: false) }),
] as [(String, () throws -> Void)] where runs(name) {
    do {
        let (seconds, peak) = try peakOf(transfer)
        let ratio = Double(moyaPeaks[name] ?? 0) / Double(peak)
        if ratio > 1.2 { failures += 1 }
        print(
            column(name, 26) + column(String(format: "%.1f s", seconds), 10) + column(String(format: "%.0f", Double(sizeMiB) / seconds), 9)
                + column(mib(peak), 13) + column(mib(peak - idle), 12) + String(format: "%.2fx %@", ratio, ratio <= 1.2 ? "met" : "MISSED"))
    } catch {
        print(column(name, 26) + "FAILED: \(error)")
        failures += 1
    }
}
try client.syncShutdown()

try session.syncShutdown()
server.shutdownBlocking()
exit(failures == 0 ? 0 : 1)
