import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import Moya

/// The queue that writes a download's body parts to its file while the network goes on: order,
/// back pressure, failures and abandonment, with real files and a real thread pool.
@Suite("FileWriteQueue writes body parts in order, holds the reader back at its limit, and reports a failed write")
struct FileWriteQueueTests {
    /// A temporary file, open for writing, removed at the end of `body`.
    private func withFile<T>(_ body: (Int32, URL) async throws -> T) async throws -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("moya-write-queue-\(UUID().uuidString)")
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            try? FileManager.default.removeItem(at: url)
        }
        return try await body(descriptor, url)
    }

    /// Runs `body` with a one-thread pool whose thread is blocked until `body` calls `release`
    /// (which waits until the thread is free again), so that no write can run before then.
    private func withGatedPool(
        on loop: any EventLoop, _ body: (NIOThreadPool, @escaping @Sendable () async throws -> Void) async throws -> Void
    ) async throws {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        // The behaviour under test: the gate blocks the pool's own thread, not a cooperative one.
        let gate = DispatchSemaphore(value: 0)
        let blocked = pool.runIfActive(eventLoop: loop) { gate.wait() }
        let released = LoopFlag()
        let release: @Sendable () async throws -> Void = {
            if !released.isSet {
                released.isSet = true
                gate.signal()
            }
            try await blocked.get()
        }
        do {
            try await body(pool, release)
        } catch {
            try? await release()
            try await pool.shutdownGracefully()
            throw error
        }
        try await release()
        try await pool.shutdownGracefully()
    }

    private func buffer(_ bytes: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: bytes)
    }

    @Test("Parts of every size reach the file complete and in order, also when the reader is held back")
    func order() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        var generator = SystemRandomNumberGenerator()
        // Sizes on both sides of the 16 KiB limit; each part's bytes depend on its index, so a
        // part written out of order or twice shows. (Filled with a pattern: drawing millions of
        // random bytes one at a time took seconds under ThreadSanitizer.)
        let parts: [[UInt8]] = (0..<400).map { index in
            let size = [0, 1, 7, 100, 4096, 40_000][index % 6] + Int.random(in: 0..<50, using: &generator)
            let seed = UInt8(truncatingIfNeeded: index &* 37)
            return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                for offset in 0..<size { buffer[offset] = seed &+ UInt8(truncatingIfNeeded: offset) }
                count = size
            }
        }
        let expected = parts.flatMap { $0 }
        try await withFile { descriptor, url in
            // A small limit, so that the reader is held back again and again.
            let queue = try await loop.submit { FileWriteQueue(descriptor: descriptor, fileURL: url, eventLoop: loop, limit: 16 * 1024) }.get()
            for part in parts {
                // As AsyncHTTPClient does: the next part only once the previous future completed.
                try await loop.flatSubmit { queue.enqueue(self.buffer(part)) }.get()
            }
            try await loop.flatSubmit { queue.drain() }.get()
            let written = try Data(contentsOf: url)
            #expect(written.count == expected.count)
            #expect(written == Data(expected))
        }
    }

    @Test("The reader goes on while less than the limit waits, and is held back until a write makes room")
    func backPressure() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        try await withGatedPool(on: loop) { pool, release in
            try await withFile { descriptor, url in
                let queue = try await loop.submit {
                    FileWriteQueue(descriptor: descriptor, fileURL: url, eventLoop: loop, limit: 1000, threadPool: pool)
                }.get()
                // The first part goes to the (blocked) pool as a write; the next ones wait.
                let first = try await loop.submit { queue.enqueue(self.buffer([UInt8](repeating: 1, count: 600))) }.get()
                #expect(try await isComplete(first, on: loop))
                let second = try await loop.submit { queue.enqueue(self.buffer([UInt8](repeating: 2, count: 600))) }.get()
                #expect(try await isComplete(second, on: loop), "600 bytes wait, under the limit of 1000")
                let third = try await loop.submit { queue.enqueue(self.buffer([UInt8](repeating: 3, count: 600))) }.get()
                #expect(try await !isComplete(third, on: loop), "1200 bytes wait: the reader must be held back")
                try await release()
                // The first write ends, the waiting parts become the next write: room again.
                try await third.get()
                try await loop.flatSubmit { queue.drain() }.get()
                let written = try Data(contentsOf: url)
                #expect(written == Data([UInt8](repeating: 1, count: 600) + [UInt8](repeating: 2, count: 600) + [UInt8](repeating: 3, count: 600)))
            }
        }
    }

    @Test("A failed write fails the reader, drain() and every later part with temporaryFileFailed")
    func failedWrite() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        // Every write to /dev/full fails with ENOSPC.
        let descriptor = open("/dev/full", O_WRONLY)
        try #require(descriptor >= 0, "this test needs /dev/full")
        defer { close(descriptor) }
        let url = URL(fileURLWithPath: "/dev/full")
        let queue = try await loop.submit { FileWriteQueue(descriptor: descriptor, fileURL: url, eventLoop: loop, limit: 1 << 20) }.get()
        try await loop.flatSubmit { queue.enqueue(self.buffer([1, 2, 3])) }.get()
        let drained = await outcome { try await loop.flatSubmit { queue.drain() }.get() }
        guard case .failure(FileTransferError.temporaryFileFailed(let failedURL, let underlying)) = drained else {
            Issue.record("expected temporaryFileFailed, got \(drained)")
            return
        }
        #expect(failedURL == url)
        #expect((underlying as? POSIXError)?.code == .ENOSPC)
        let later = await outcome { try await loop.flatSubmit { queue.enqueue(self.buffer([4])) }.get() }
        guard case .failure(FileTransferError.temporaryFileFailed) = later else {
            Issue.record("a part after the failure must fail too, got \(later)")
            return
        }
    }

    @Test("abandon() drops the waiting parts and completes once the write in flight is over")
    func abandon() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        try await withGatedPool(on: loop) { pool, release in
            try await withFile { descriptor, url in
                let queue = try await loop.submit {
                    FileWriteQueue(descriptor: descriptor, fileURL: url, eventLoop: loop, limit: 100, threadPool: pool)
                }.get()
                _ = try await loop.submit { queue.enqueue(self.buffer([UInt8](repeating: 1, count: 10))) }.get()
                let held = try await loop.submit { queue.enqueue(self.buffer([UInt8](repeating: 2, count: 200))) }.get()
                let abandoned = try await loop.submit { queue.abandon() }.get()
                // The held reader is released with an error: the attempt is over.
                await #expect(throws: (any Error).self) { try await held.get() }
                #expect(try await !isComplete(abandoned, on: loop), "the first write has not run yet")
                try await release()
                try await abandoned.get()
                let written = try Data(contentsOf: url)
                #expect(written == Data([UInt8](repeating: 1, count: 10)), "only the write already handed to the pool reaches the file")
            }
        }
    }

    /// Whether `future` has completed, checked on its loop after the loop ran what was queued
    /// before (the callback registered here included).
    private func isComplete(_ future: EventLoopFuture<Void>, on loop: any EventLoop) async throws -> Bool {
        let done = LoopFlag()
        future.whenComplete { _ in done.isSet = true }
        return try await loop.submit { done.isSet }.get()
    }

    private func outcome(_ body: () async throws -> Void) async -> Result<Void, any Error> {
        do {
            try await body()
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}

/// A flag that one thread at a time sets and reads.
private final class LoopFlag: @unchecked Sendable {
    // Sendable: either written by a future's callback on its loop and read by a job on the same
    // loop, or set and read by one test's steps, which run one after another.
    var isSet = false
}
