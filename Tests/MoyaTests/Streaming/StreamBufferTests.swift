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

    @Test("Demand that comes before the producer asks for it is not lost")
    func earlyDemand() async throws {
        let buffer = StreamBuffer(highWatermark: 4)
        #expect(buffer.append(Data(count: 3)) == .more)
        #expect(buffer.append(Data(count: 3)) == .pause)
        _ = try await buffer.next().get()
        _ = try await buffer.next().get()
        let resumed = Locked(0)
        buffer.waitForDemand { resumed.update { $0 += 1 } }
        #expect(resumed.value == 1)
    }

    @Test("A chunk larger than the buffer reaches a consumer that waits (no deadlock)")
    func largeChunkToWaitingConsumer() async throws {
        let buffer = StreamBuffer(highWatermark: 4)
        let reader = consumer(buffer)
        #expect(await eventually { buffer.hasWaitingConsumer })
        let result = buffer.append(Data(count: 100))
        #expect(result == .more || result == .moreAndWake)
        buffer.finish(.success(()))
        #expect(try await reader.value.map(\.count) == [100])
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

    @Test("A consumer that stops calls the stop handler once, drops the chunks and releases a paused producer")
    func consumerStops() async throws {
        let buffer = StreamBuffer(highWatermark: 1)
        let stopped = Locked(0)
        buffer.setStopHandler { stopped.update { $0 += 1 } }
        #expect(buffer.append(Data(count: 5)) == .pause)
        let resumed = Locked(0)
        buffer.waitForDemand { resumed.update { $0 += 1 } }
        buffer.consumerStopped()
        buffer.consumerStopped()
        #expect(stopped.value == 1)
        #expect(resumed.value == 1)
        #expect(buffer.append(Data(count: 1)) == .stopped)
        guard case .failure(let error) = await buffer.next() else {
            Issue.record("expected the cancellation")
            return
        }
        #expect(error.isCancelled)
    }

    @Test("After the end, a consumer that stops has no request to stop")
    func stopAfterEnd() {
        let buffer = StreamBuffer(highWatermark: 10)
        let stopped = Locked(0)
        buffer.setStopHandler { stopped.update { $0 += 1 } }
        buffer.finish(.success(()))
        buffer.consumerStopped()
        #expect(stopped.value == 0)
    }

    @Test("Cancelling a waiting consumer's task stops the stream")
    func cancelWhileWaiting() async throws {
        let buffer = StreamBuffer(highWatermark: 10)
        let stopped = Locked(0)
        buffer.setStopHandler { stopped.update { $0 += 1 } }
        let reader = consumer(buffer)
        #expect(await eventually { buffer.hasWaitingConsumer })
        reader.cancel()
        await #expect(throws: MoyaError.self) { try await reader.value }
        #expect(stopped.value == 1)
    }

    @Test("Only one consumer may claim the chunks")
    func oneClaim() {
        let buffer = StreamBuffer(highWatermark: 10)
        #expect(buffer.claim())
        #expect(!buffer.claim())
    }

    @Test("Many chunks from another thread, a slow consumer: all arrive, in order, the buffer bounded")
    func producerThread() async throws {
        let buffer = StreamBuffer(highWatermark: 64)
        let producer = Thread {
            for index in 0..<2000 {
                let chunk = Data(repeating: UInt8(index % 251), count: 16)
                switch buffer.append(chunk) {
                case .more: break
                case .moreAndWake: buffer.wakeConsumer()
                case .pause:
                    // Blocks the producer thread this test made, not a cooperative one.
                    let semaphore = DispatchSemaphore(value: 0)
                    buffer.waitForDemand { semaphore.signal() }
                    semaphore.wait()
                case .stopped: return
                }
            }
            buffer.finish(.success(()))
        }
        producer.start()
        var index = 0
        while case .success(let chunk?) = await buffer.next() {
            #expect(chunk == Data(repeating: UInt8(index % 251), count: 16))
            index += 1
            // The behaviour under test: a slow consumer, so that the producer has to pause.
            if index % 100 == 0 { try await _Concurrency.Task.sleep(nanoseconds: 1_000_000) }
        }
        #expect(index == 2000)
    }
}
