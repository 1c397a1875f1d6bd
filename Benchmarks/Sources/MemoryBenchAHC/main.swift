// The raw AsyncHTTPClient side of Comparisons/memory-bench.sh: a program that links
// AsyncHTTPClient and NIO and nothing of Moya (no Foundation networking, no libcurl), so that its
// resident memory is what a user's program pays for AsyncHTTPClient alone.
//
//     MemoryBenchAHC get [requests] [concurrency]    GET / `requests` times, `concurrency` at a time
//     MemoryBenchAHC download [path]                 one download of `path` to a temporary file
//
// The server is MEMORY_BENCH_URL (default http://127.0.0.1:8089, the nginx of the script). At the
// end the program prints its peak and current resident memory (MemoryReport).
import AsyncHTTPClient
import MemoryBenchSupport
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

guard let arguments = MemoryBenchArguments(CommandLine.arguments) else {
    print("usage: MemoryBenchAHC get [requests] [concurrency] | download [path]")
    exit(2)
}
MemoryReport.step("start")
// As AsyncHTTPClient's defaults set it up, on NIO's singleton group.
let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
MemoryReport.step("client")
let label: String
let started = monotonicSeconds()
switch arguments.workload {
case .get(let requests, let concurrency):
    label = "ahc get \(requests) c\(concurrency)"
    let url = arguments.server + "/"
    if MemoryReport.printsSteps {
        _ = try await http.execute(request: HTTPClient.Request(url: url)).get()
        MemoryReport.step("first request")
    }
    try await runWorkers(total: requests, concurrency: concurrency) {
        let response = try await http.execute(request: HTTPClient.Request(url: url)).get()
        guard response.status == .ok else { fatalError("GET / answered \(response.status)") }
    }
case .download(let path):
    label = "ahc download \(path)"
    let file = MemoryBenchArguments.temporaryFile()
    defer { MemoryBenchArguments.remove(file) }
    let delegate = try FileDownloadDelegate(path: file)
    let progress = try await http.execute(request: HTTPClient.Request(url: arguments.server + path), delegate: delegate).get()
    guard progress.head.status == .ok else { fatalError("GET \(path) answered \(progress.head.status)") }
}
let seconds = monotonicSeconds(since: started)
// Shut down as ProcessBench does: a top-level `await http.shutdown()` picks the overload that
// returns a future.
await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    http.shutdown { _ in continuation.resume() }
}
MemoryReport.step("end")
MemoryReport.saveMappingsIfAsked()
print("\(label) \(MemoryReport().line) seconds \(seconds)")
