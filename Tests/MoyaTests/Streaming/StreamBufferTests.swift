import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// Reads `buffer` to its end on a task of its own.
private func consumer(_ buffer: StreamBuffer) -> _Concurrency.Task<[Data], any Error> {
    _Concurrency.Task {
        var chunks: [Data] = []
        while true {
            switch await buffer.next() {
            case .success(let chunk?): chunks.append(chunk)
            case .success(nil): return chunks
            case .failure(let error): throw error
            }
        }
    }
}

/// A stream's own use of its buffer: chunks weighed in bytes, the wake after a burst, the end
/// after the chunks. What every ``BoundedBuffer`` does (stopping, cancelling, claiming, early
/// demand) is tested once, in `BoundedBufferTests`.
@Suite("The stream's buffer between transport and consumer, without a network")
struct StreamBufferTests {
    @Test("Chunks come out in order, then the end")
    func order() async throws {
        let buffer = StreamBuffer(highWatermark: 100)
        #expect(buffer.append(Data("ab".utf8)) == .more)
        #expect(buffer.append(Data("cd".utf8)) == .more)
        buffer.finish(.success(()))
        #expect(try await consumer(buffer).value == [Data("ab".utf8), Data("cd".utf8)])
    }

    @Test("Above the high watermark the producer pauses, and reads on once half was taken")
    func backPressure() async throws {
        let buffer = StreamBuffer(highWatermark: 10)
        #expect(buffer.append(Data(count: 6)) == .more)
        #expect(buffer.append(Data(count: 6)) == .pause)
        let resumed = Locked(0)
        buffer.waitForDemand { resumed.update { $0 += 1 } }
        #expect(resumed.value == 0)
        // 6 bytes left: above the low watermark (5).
        #expect(try await buffer.next().get()?.count == 6)
        #expect(resumed.value == 0)
        #expect(try await buffer.next().get()?.count == 6)
        #expect(resumed.value == 1)
    }

    @Test("A chunk waiting for its wake goes before the end")
    func wakeThenFinish() async throws {
        let buffer = StreamBuffer(highWatermark: 100)
        let reader = consumer(buffer)
        #expect(await eventually { buffer.hasWaitingConsumer })
        #expect(buffer.append(Data("x".utf8)) == .moreAndWake)
        #expect(buffer.append(Data("y".utf8)) == .more)
        buffer.finish(.success(()))
        buffer.wakeConsumer()
        #expect(try await reader.value == [Data("x".utf8), Data("y".utf8)])
    }

    @Test("The end's error comes after the chunks")
    func failure() async throws {
        let buffer = StreamBuffer(highWatermark: 100)
        _ = buffer.append(Data("x".utf8))
        buffer.finish(.failure(.requestMapping("broken")))
        #expect(try await buffer.next().get() == Data("x".utf8))
        guard case .failure(.requestMapping("broken")) = await buffer.next() else {
            Issue.record("expected the error")
            return
        }
    }

    @Test("Many chunks from another thread, a slow consumer: all arrive, in order, the buffer bounded")
    func producerThread() async throws {
        let buffer = StreamBuffer(highWatermark: 64)
        // A task of its own, detached from the test's: it runs on another thread of the pool.
        _Concurrency.Task.detached {
            for index in 0..<2000 {
                let chunk = Data(repeating: UInt8(index % 251), count: 16)
                switch buffer.append(chunk) {
                case .more: break
                case .moreAndWake: buffer.wakeConsumer()
                case .pause:
                    // Suspends the producer until the consumer has taken enough, blocking no thread.
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        buffer.waitForDemand { continuation.resume() }
                    }
                case .stopped: return
                }
            }
            buffer.finish(.success(()))
        }
        var index = 0
        while case .success(let chunk?) = await buffer.next() {
            #expect(chunk == Data(repeating: UInt8(index % 251), count: 16))
            index += 1
            // Time is the behaviour under test: a slow consumer, so that the producer has to pause.
            if index % 100 == 0 { try await _Concurrency.Task.sleep(nanoseconds: 1_000_000) }
        }
        #expect(index == 2000)
    }
}
